// ctest entry point: runs the SDK client tests with node's built-in runner, or exits 77
// (ctest SKIP_RETURN_CODE) when the SDK is not installed (`npm ci --prefix tests/mcp`).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
if (!existsSync(join(here, 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'))) {
  console.log('SKIP: @modelcontextprotocol/sdk is not installed; run `npm ci --prefix tests/mcp`');
  process.exit(77);
}
if (!process.env.YOLO_BIN || !existsSync(process.env.YOLO_BIN)) {
  console.error('YOLO_BIN must name the built yolo binary');
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--test', '--test-reporter=spec', join(here, 'mcp_sdk.test.mjs')], {
  stdio: 'inherit',
  cwd: here,
});
process.exit(r.status ?? 1);

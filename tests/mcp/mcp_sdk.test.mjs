// `yolo mcp` driven over stdio by the official MCP TypeScript SDK client: list the tools,
// call each one, check the answers and the state file on disk, bad arguments, and the
// mcp_can_approve switch. Run with `node --test` (YOLO_BIN = the built yolo binary).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync, existsSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

const here = dirname(fileURLToPath(import.meta.url));
const sourceDir = process.env.YOLO_SOURCE_DIR ?? resolve(here, '..', '..');
const yolo = process.env.YOLO_BIN;
assert.ok(yolo && existsSync(yolo), 'YOLO_BIN must name the built yolo binary');

const CLIENT_NAME = 'sdk-test-client';

const PLAN_OK = `---
phase: 01
plan: 01
title: Demo plan
wave: 1
depends_on: []
must_haves:
  - "the demo file exists"
---
# Plan 01-01

### Task 1: Write the file
**Files:** \`src/demo.txt\` (new)
`;

const PLAN_BAD = `---
phase: 01
plan: 02
title: A plan without must_haves
wave: 0
depends_on: []
---
# Plan 01-02
`;

function makeRepo({ planning = true } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'yolo-mcp-'));
  if (planning) {
    const phase = join(root, '.yolo-planning', 'phases', '01-demo');
    mkdirSync(phase, { recursive: true });
    writeFileSync(join(root, '.yolo-planning', 'ROADMAP.md'), '# Roadmap\n\nBuild the demo.\n');
    writeFileSync(join(phase, '01-01-PLAN.md'), PLAN_OK);
    writeFileSync(join(phase, '01-02-PLAN.md'), PLAN_BAD);
  }
  return root;
}

// A person at a terminal: `yolo approve` needs one, so it runs under script(1)'s pty and
// the person's answer ("y") is typed into it.
function atTerminal(args, cwd) {
  const q = (a) => `'${String(a).replace(/'/g, `'\\''`)}'`;
  return execFileSync('script', ['-qec', [yolo, ...args].map(q).join(' '), '/dev/null'], { cwd, input: 'y\n', encoding: 'utf8' });
}

const stateFile = (root) => join(root, '.yolo-planning', '.execution-state.json');
const readState = (root) => JSON.parse(readFileSync(stateFile(root), 'utf8'));
const schemaFile = (name) => JSON.parse(readFileSync(join(sourceDir, 'schemas', `${name}.json`), 'utf8'));
const dashed = (s) => s.replaceAll('_', '-');

async function connect(root) {
  const transport = new StdioClientTransport({
    command: yolo,
    args: ['mcp', '--repo', root],
    env: { ...process.env },
    stderr: 'pipe',
  });
  const client = new Client({ name: CLIENT_NAME, version: '1.0.0' });
  await client.connect(transport);
  return client;
}

// Calls a tool and expects a JSON-RPC error (the SDK throws McpError).
async function expectProtocolError(client, name, args, code) {
  await assert.rejects(
    () => client.callTool({ name, arguments: args }),
    (err) => {
      assert.ok(err instanceof McpError, `expected McpError, got ${err}`);
      assert.equal(err.code, code, err.message);
      return true;
    },
  );
}

describe('yolo mcp with the MCP TypeScript SDK client', () => {
  let root;
  let client;
  let tools;

  before(async () => {
    root = makeRepo();
    client = await connect(root);
    tools = (await client.listTools()).tools;
  });

  after(async () => {
    await client?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  test('initialize: server info, capabilities, instructions', () => {
    const info = client.getServerVersion();
    assert.equal(info.name, 'yolo');
    assert.match(info.version, /^\d+\.\d+\.\d+/);
    assert.deepEqual(client.getServerCapabilities(), { tools: {} });
    assert.match(client.getInstructions() ?? '', /request_human_approval/);
  });

  test('tools/list publishes the schemas of schemas/ as inputSchema and outputSchema', () => {
    const names = tools.map((t) => t.name).sort();
    assert.deepEqual(names, ['execution_status', 'manage_hitl_gate', 'request_human_approval', 'review_plan']);
    for (const t of tools) {
      assert.equal(typeof t.description, 'string');
      assert.ok(t.description.length > 20, t.name);
      assert.equal(typeof t.title, 'string');
      assert.deepEqual(t.inputSchema, schemaFile(`mcp-${dashed(t.name)}-input`), t.name);
      assert.deepEqual(t.outputSchema, schemaFile(`mcp-${dashed(t.name)}-output`), t.name);
      assert.equal(t.inputSchema.type, 'object');
      assert.equal(t.outputSchema.type, 'object');
    }
  });

  test('review_plan: approve, reject with findings, phase checks, outside the project', async () => {
    const ok = await client.callTool({
      name: 'review_plan',
      arguments: { plan_path: '.yolo-planning/phases/01-demo/01-01-PLAN.md' },
    });
    assert.equal(ok.isError, false);
    assert.equal(ok.structuredContent.verdict, 'approve');
    assert.equal(ok.structuredContent.ok, true);
    assert.deepEqual(ok.structuredContent.findings, []);
    assert.match(ok.content[0].text, /approve/);
    // The text content also carries the structured result, serialised.
    assert.deepEqual(JSON.parse(ok.content.at(-1).text), ok.structuredContent);

    const bad = await client.callTool({
      name: 'review_plan',
      arguments: {
        plan_path: join(root, '.yolo-planning/phases/01-demo/01-02-PLAN.md'),
        phase_dir: '.yolo-planning/phases/01-demo',
      },
    });
    assert.equal(bad.isError, false);
    assert.equal(bad.structuredContent.verdict, 'reject');
    assert.equal(bad.structuredContent.ok, false);
    const checks = bad.structuredContent.findings.map((f) => f.check);
    assert.ok(checks.includes('must_haves'), JSON.stringify(checks));
    assert.ok(checks.includes('wave_valid'), JSON.stringify(checks));
    assert.match(bad.content[0].text, /reject/);

    const missing = await client.callTool({ name: 'review_plan', arguments: { plan_path: 'nope/PLAN.md' } });
    assert.equal(missing.structuredContent.verdict, 'reject');
    assert.equal(missing.structuredContent.findings[0].check, 'file');

    const outside = await client.callTool({ name: 'review_plan', arguments: { plan_path: '../../etc/passwd' } });
    assert.equal(outside.isError, true);
    assert.match(outside.content[0].text, /inside the project root/);
    assert.equal(outside.structuredContent, undefined);

    // A link inside the project that points out of it is refused too.
    symlinkSync(tmpdir(), join(root, 'out-link'));
    const linked = await client.callTool({ name: 'review_plan', arguments: { plan_path: 'out-link/PLAN.md' } });
    assert.equal(linked.isError, true);
    assert.match(linked.content[0].text, /outside the project root/);
  });

  test('bad arguments are invalid-params errors (-32602), before anything runs', async () => {
    await expectProtocolError(client, 'manage_hitl_gate', { action: 'destroy' }, ErrorCode.InvalidParams);
    await expectProtocolError(client, 'review_plan', {}, ErrorCode.InvalidParams);
    await expectProtocolError(client, 'review_plan', { plan_path: 7 }, ErrorCode.InvalidParams);
    await expectProtocolError(client, 'request_human_approval', { plan_path: 'x', gate_type: 'nope' },
      ErrorCode.InvalidParams);
    await expectProtocolError(client, 'execution_status', { verbose: true }, ErrorCode.InvalidParams);
    await expectProtocolError(client, 'no_such_tool', {}, ErrorCode.InvalidParams);
    assert.equal(existsSync(stateFile(root)), false, 'no call above may write the state');
  });

  test('request_human_approval pauses the run and writes the state file', async () => {
    const r = await client.callTool({
      name: 'request_human_approval',
      arguments: { plan_path: '.yolo-planning/ROADMAP.md', reason: 'vision review' },
    });
    assert.equal(r.isError, false, r.content[0]?.text);
    const s = r.structuredContent;
    assert.equal(s.status, 'paused');
    assert.equal(s.approval.plan_path, '.yolo-planning/ROADMAP.md');
    assert.equal(s.approval.state_file, stateFile(root));
    assert.match(s.approval.requested_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
    assert.match(r.content[0].text, /Awaiting human approval for \.yolo-planning\/ROADMAP\.md/);

    const st = readState(root);
    assert.equal(st.status, 'awaiting_approval');
    assert.equal(st.approval.approved, false);
    assert.equal(st.approval.plan_path, '.yolo-planning/ROADMAP.md');
    assert.equal(st.gates.length, 1);
    assert.equal(st.gates[0].status, 'OPEN');
    assert.equal(st.gates[0].id, s.gate_id);

    // The same request again answers as the first did (idempotent), no second gate.
    const again = await client.callTool({
      name: 'request_human_approval',
      arguments: { plan_path: '.yolo-planning/ROADMAP.md' },
    });
    assert.deepEqual(again.structuredContent.approval, s.approval);
    assert.equal(readState(root).gates.length, 1);

    // A different gate while one is open is a tool error, the state untouched.
    const other = await client.callTool({
      name: 'request_human_approval',
      arguments: { plan_path: '.yolo-planning/phases/01-demo/01-01-PLAN.md', gate_type: 'security' },
    });
    assert.equal(other.isError, true);
    assert.match(other.content[0].text, /already frozen/);
    assert.equal(readState(root).gates.length, 1);
  });

  test('manage_hitl_gate list shows the open gate', async () => {
    const r = await client.callTool({ name: 'manage_hitl_gate', arguments: { action: 'list' } });
    assert.equal(r.isError, false);
    const gates = r.structuredContent.gates;
    assert.equal(gates.length, 1);
    assert.equal(gates[0].gate_type, 'vision');
    assert.equal(gates[0].status, 'OPEN');
    assert.equal(gates[0].reason, 'vision review');
    assert.match(gates[0].created_at, /^\d{4}-/);
    assert.equal(gates[0].gate_id, readState(root).gates[0].id);
  });

  test('execution_status shows what yolo status --json shows', async () => {
    const r = await client.callTool({ name: 'execution_status', arguments: {} });
    assert.equal(r.isError, false, r.content[0]?.text);
    const cli = JSON.parse(execFileSync(yolo, ['status', '--json'], { cwd: root, encoding: 'utf8' }));
    assert.deepEqual(r.structuredContent, cli);
  });

  test('approving over MCP is refused by default', async () => {
    for (const action of ['approve', 'reject']) {
      const r = await client.callTool({
        name: 'manage_hitl_gate',
        arguments: { action, feedback: 'self-approval' },
      });
      assert.equal(r.isError, true, action);
      // It says what a person does, never which setting would let the agent through.
      assert.match(r.content[0].text, new RegExp(`yolo ${action}`));
      assert.doesNotMatch(r.content[0].text, /mcp_can_approve|config/);
    }
    const st = readState(root);
    assert.equal(st.status, 'awaiting_approval');
    assert.equal(st.gates[0].status, 'OPEN');
    assert.equal(st.approval.approved, false);
  });

  test('mcp_can_approve written by an agent does not let it approve', async () => {
    writeFileSync(join(root, '.yolo-planning', 'config.json'), JSON.stringify({ mcp_can_approve: true }));
    const r = await client.callTool({ name: 'manage_hitl_gate', arguments: { action: 'approve' } });
    assert.equal(r.isError, true, r.content[0]?.text);
    assert.equal(readState(root).gates[0].status, 'OPEN');
  });

  test('with mcp_can_approve approved by a person, approve records approved_by mcp:<client name>', async () => {
    // The vision gate covers the config: the person approves ROADMAP.md and mcp_can_approve together.
    const visionId = readState(root).gates[0].id;
    // The agent wrote mcp_can_approve after the gate opened: the first approve shows the change
    // and approves nothing; the person approves again once they have read it.
    assert.throws(() => atTerminal(['approve', visionId, '--by', 'alice'], root));
    assert.equal(readState(root).gates[0].status, 'OPEN');
    atTerminal(['approve', visionId, '--by', 'alice'], root);
    assert.equal(readState(root).gates[0].status, 'APPROVED');
    const req = await client.callTool({
      name: 'request_human_approval',
      arguments: { plan_path: '.yolo-planning/phases/01-demo/01-01-PLAN.md', gate_type: 'scope_change', reason: 'more scope' },
    });
    const gateId = req.structuredContent.gate_id;
    const r = await client.callTool({
      name: 'manage_hitl_gate',
      arguments: { action: 'approve', gate_id: gateId },
    });
    assert.equal(r.isError, false, r.content[0]?.text);
    assert.equal(r.structuredContent.gate_id, gateId);
    assert.equal(r.structuredContent.status, 'resumed');
    const st = readState(root);
    assert.equal(st.status, 'running');
    const gate = st.gates.find((g) => g.id === gateId);
    assert.equal(gate.status, 'APPROVED');
    assert.equal(gate.approved_by, `mcp:${CLIENT_NAME}`);
    assert.match(gate.digest, /^sha256:[0-9a-f]{64}$/);

    const list = await client.callTool({ name: 'manage_hitl_gate', arguments: { action: 'list' } });
    assert.deepEqual(list.structuredContent.gates, []);

    // Nothing left to approve: a tool error, not a crash.
    const none = await client.callTool({ name: 'manage_hitl_gate', arguments: { action: 'approve' } });
    assert.equal(none.isError, true);
  });

  test('with mcp_can_approve, reject halts the run and keeps the feedback', async () => {
    const req = await client.callTool({
      name: 'request_human_approval',
      arguments: { plan_path: '.yolo-planning/phases/01-demo/01-01-PLAN.md', gate_type: 'security', reason: 'secrets' },
    });
    assert.equal(req.structuredContent.status, 'paused', req.content[0]?.text);
    const r = await client.callTool({
      name: 'manage_hitl_gate',
      arguments: { action: 'reject', gate_id: req.structuredContent.gate_id, feedback: 'split the secrets out' },
    });
    assert.equal(r.isError, false, r.content[0]?.text);
    assert.deepEqual(
      { gate_id: r.structuredContent.gate_id, status: r.structuredContent.status, feedback: r.structuredContent.feedback },
      { gate_id: req.structuredContent.gate_id, status: 'rejected', feedback: 'split the secrets out' },
    );
    const st = readState(root);
    assert.equal(st.status, 'halted');
    const gate = st.gates.find((g) => g.id === req.structuredContent.gate_id);
    assert.equal(gate.status, 'REJECTED');
    assert.equal(gate.feedback, 'split the secrets out');
  });

  test('a gate opened over MCP is approved from a terminal, and the server sees it', async () => {
    const req = await client.callTool({
      name: 'request_human_approval',
      arguments: { plan_path: '.yolo-planning/ROADMAP.md', reason: 'revised roadmap' },
    });
    assert.equal(req.structuredContent.status, 'paused', req.content[0]?.text);
    const id = req.structuredContent.gate_id;
    atTerminal(['approve', id, '--by', 'alice', '--repo', root], root);
    const list = await client.callTool({ name: 'manage_hitl_gate', arguments: { action: 'list' } });
    assert.deepEqual(list.structuredContent.gates, []);
    const status = await client.callTool({ name: 'execution_status', arguments: {} });
    const gate = status.structuredContent.gates.find((g) => g.id === id);
    assert.equal(gate.status, 'APPROVED');
    assert.equal(gate.approved_by, 'alice');
    assert.equal(status.structuredContent.status, 'running');
  });
});

describe('yolo mcp outside a yolo project', () => {
  test('request_human_approval is a tool error when .yolo-planning/ does not exist', async () => {
    const root = makeRepo({ planning: false });
    const client = await connect(root);
    try {
      const r = await client.callTool({ name: 'request_human_approval', arguments: { plan_path: 'ROADMAP.md' } });
      assert.equal(r.isError, true);
      assert.match(r.content[0].text, /\.yolo-planning/);
      assert.equal(existsSync(join(root, '.yolo-planning')), false);
      const l = await client.callTool({ name: 'manage_hitl_gate', arguments: { action: 'list' } });
      assert.equal(l.isError, true);
    } finally {
      await client.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

# `yolo mcp` driven by the official MCP TypeScript SDK client (tests/mcp/). Skipped (exit 77)
# when tests/mcp/node_modules is absent; scripts/test installs it with `npm ci --prefix tests/mcp`.
find_program(YOLO_NODE_EXECUTABLE node)
if(YOLO_NODE_EXECUTABLE)
  add_test(NAME mcp_sdk_client
           COMMAND ${YOLO_NODE_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/mcp/run.mjs
           WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/tests/mcp)
  set_tests_properties(mcp_sdk_client PROPERTIES
    ENVIRONMENT "YOLO_BIN=$<TARGET_FILE:yolo>;YOLO_SOURCE_DIR=${CMAKE_SOURCE_DIR}"
    SKIP_RETURN_CODE 77
    TIMEOUT 180)
else()
  message(STATUS "node not found: the MCP SDK client test (mcp_sdk_client) is not registered")
endif()

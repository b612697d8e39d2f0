# The real agent CLIs (Claude Code, Codex CLI, Gemini CLI, pinned in tests/agents/package.json)
# driven through the whole yolo loop by tests/agents/run_e2e.py against the scripted model
# server on loopback (tests/agents/model_server.py, scenarios in tests/agents/scenarios/).
# Each test is skipped (exit 77) with its reason when its CLI is not installed;
# `scripts/setup --with-tools` installs them with `npm ci --prefix tests/agents`.
# Both builds: in the sanitizer build the same loop runs yolo's review, sandbox, gates and
# merges under ASan and UBSan with real agents' output.
find_program(YOLO_PYTHON3_EXECUTABLE python3)
if(YOLO_PYTHON3_EXECUTABLE)
  foreach(cli claude codex gemini)
    add_test(NAME agent_cli_${cli}
             COMMAND ${YOLO_PYTHON3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/agents/run_e2e.py ${cli}
             WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/tests/agents)
    set_tests_properties(agent_cli_${cli} PROPERTIES
      ENVIRONMENT "YOLO_BIN=$<TARGET_FILE:yolo>"
      SKIP_RETURN_CODE 77
      TIMEOUT 900)
  endforeach()
else()
  message(STATUS "python3 not found: the agent CLI tests (agent_cli_*) are not registered")
endif()

#include "runner/command.h"

int main(int argc, char** argv) { return yolo::runner::run_cli(argc, argv); }

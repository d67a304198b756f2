// The journal is part of what a dispatcher is to those who run one (the command line, devtools, the
// bench, tests): they name it through Dispatcher, as they did when it lived here.
@_exported import Journaling

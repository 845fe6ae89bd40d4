/* `hoptrace ctl SOCKET COMMAND...`: one command to a process's control
 * socket (see include/hoptrace/control.h), its answer on stdout. */
#ifndef HT_TOOL_CTL_H
#define HT_TOOL_CTL_H

int ctl_main(int argc, char **argv);

#endif

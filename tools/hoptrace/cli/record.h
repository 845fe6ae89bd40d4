/* `hoptrace record`: run a command under an LTTng session set up for
 * hoptrace events, then tear down exactly what was set up. */
#ifndef HT_TOOL_RECORD_H
#define HT_TOOL_RECORD_H

int record_main(int argc, char **argv);

#endif

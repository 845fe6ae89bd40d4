/* `hoptrace diff`: two recordings, or one split, compared per hop and
 * phase of the critical path (diff/diff_stats.h). */
#ifndef HT_TOOL_DIFF_CMD_H
#define HT_TOOL_DIFF_CMD_H

/* argv[0] is "diff"; decoders: the default of --decoders. The exit
 * status: 0, 1 input error, 2 usage or output error, 3 written but a
 * limit dropped traces. */
int diff_main(int argc, char **argv, unsigned decoders);

#endif

/* The envelope's message type: what the frame is (wire.h) and what a
 * span's message events say it was (span.h). A header of its own so that
 * span.h names it without pulling in the codec.
 */
#ifndef HOPTRACE_MSG_TYPE_H
#define HOPTRACE_MSG_TYPE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ht_msg_type {
  HT_MSG_REQUEST = 1,
  HT_MSG_REPLY = 2,
  HT_MSG_ONEWAY = 3,
  HT_MSG_ERROR = 4
  /* 5 was a "control" type nothing sent or handled: refused
   * (HT_EMSGTYPE), never to be reused */
} ht_msg_type;

#ifdef __cplusplus
}
#endif

#endif /* HOPTRACE_MSG_TYPE_H */

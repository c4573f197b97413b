/*
 * Live reading (issue 28): what ptlog's commands share to show a log while
 * it is written, through a pipe (record -o - | dump -) or from a file that
 * grows (dump --follow, top). follow.c, top.c and input.c implement it.
 */
#ifndef PTLOG_LIVE_H
#define PTLOG_LIVE_H

/*
 * input.c: fn(ctx) is called before a read of a pipe input would block
 * (nothing to read yet), so that the lines made from what was read go out
 * now instead of when the output buffer fills: a pipe's events reach the
 * terminal or the next program as they arrive. NULL: no hook. One output
 * at a time per process.
 */
void ptlog_in_on_wait(void (*fn)(void *ctx), void *ctx);

#endif

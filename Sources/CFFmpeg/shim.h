// FFmpeg for Swift: the headers Tandem uses, and the function-like macros that Swift cannot
// import, re-exported as static inline functions.
#ifndef TANDEM_CFFMPEG_SHIM_H
#define TANDEM_CFFMPEG_SHIM_H

#include <errno.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/imgutils.h>
#include <libavutil/mathematics.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswresample/swresample.h>
#include <libswscale/swscale.h>

/// AVERROR(e): an FFmpeg error code from a POSIX errno value.
static inline int tandem_averror(int posixError) { return AVERROR(posixError); }

/// AVERROR_EOF: the end of the input.
static inline int tandem_averror_eof(void) { return AVERROR_EOF; }

/// AVERROR(EAGAIN): output is not available in this state; send more input first.
static inline int tandem_averror_eagain(void) { return AVERROR(EAGAIN); }

/// AVERROR_INVALIDDATA: invalid data found while processing the input.
static inline int tandem_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }

/// AV_NOPTS_VALUE: "no timestamp".
static inline int64_t tandem_av_nopts_value(void) { return AV_NOPTS_VALUE; }

/// AV_TIME_BASE_Q: the time base of AVFormatContext.duration and start_time (microseconds).
static inline AVRational tandem_av_time_base_q(void) { return AV_TIME_BASE_Q; }

#endif

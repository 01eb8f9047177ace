#ifndef CLIBWEBSOCKETS_SHIM_H
#define CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>

/// The headroom libwebsockets needs before every buffer passed to `lws_write`
/// (`LWS_PRE` is a macro, which Swift cannot import).
static const size_t CLibWebSockets_LWS_PRE = LWS_PRE;

#endif

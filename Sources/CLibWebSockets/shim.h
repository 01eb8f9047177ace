#ifndef CLIBWEBSOCKETS_SHIM_H
#define CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/// The headroom libwebsockets needs before every buffer passed to `lws_write`
/// (`LWS_PRE` is a macro, which Swift cannot import).
static const size_t CLibWebSockets_LWS_PRE = LWS_PRE;

/// `CONTEXT_PORT_NO_LISTEN` is a macro; a client-only context passes it as its port.
static const int CLibWebSockets_PORT_NO_LISTEN = CONTEXT_PORT_NO_LISTEN;

/// Restricts libwebsockets' own logging to errors, or errors and warnings
/// (`LLL_*` are shifted macros Swift does not import reliably).
static inline void CLibWebSockets_set_log_level(int include_warnings) {
    lws_set_log_level(LLL_ERR | (include_warnings ? LLL_WARN : 0), NULL);
}

/// Server vhost options: fail instead of retrying when the port cannot be bound and, for IPv4-only
/// listen addresses, no IPv6 socket. UTF-8 validation is deliberately NOT enabled.
static inline uint64_t CLibWebSockets_server_options(int disable_ipv6) {
    uint64_t options = LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
    if (disable_ipv6)
        options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    return options;
}

/// Returns the allocator's free pages to the system (glibc's `malloc_trim`, not in Swift's Glibc module); a no-op
/// elsewhere.
static inline void CLibWebSockets_return_free_memory(void) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

#endif

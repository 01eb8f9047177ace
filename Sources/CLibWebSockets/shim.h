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

/// Server vhost options: fail instead of retrying when the port cannot be bound, for IPv4-only listen addresses no
/// IPv6 socket and, with a certificate, OpenSSL's set-up. UTF-8 validation is deliberately NOT enabled.
static inline uint64_t CLibWebSockets_server_options(int disable_ipv6, int tls) {
    uint64_t options = LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
    if (disable_ipv6)
        options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    if (tls)
        options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
    return options;
}

/// `SSL_set_tlsext_host_name` is a macro: names the server a client connects to (SNI).
static inline int CLibWebSockets_SSL_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// The `SSL_ERROR_*` codes a memory-BIO TLS client tells apart (macros).
static const int CLibWebSockets_SSL_ERROR_WANT_READ = SSL_ERROR_WANT_READ;
static const int CLibWebSockets_SSL_ERROR_WANT_WRITE = SSL_ERROR_WANT_WRITE;
static const int CLibWebSockets_SSL_ERROR_ZERO_RETURN = SSL_ERROR_ZERO_RETURN;
static const int CLibWebSockets_SSL_VERIFY_PEER = SSL_VERIFY_PEER;

/// Returns the allocator's free pages to the system (glibc's `malloc_trim`, not in Swift's Glibc module); a no-op
/// elsewhere.
static inline void CLibWebSockets_return_free_memory(void) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

#endif

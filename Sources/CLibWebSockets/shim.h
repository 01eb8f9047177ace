#ifndef CLIBWEBSOCKETS_SHIM_H
#define CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>
#include <ev.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/epoll.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/// The headroom libwebsockets needs before every buffer passed to `lws_write`
/// (`LWS_PRE` is a macro, which Swift cannot import).
static const size_t CLibWebSockets_LWS_PRE = LWS_PRE;

/// `CONTEXT_PORT_NO_LISTEN` is a macro; a client-only context passes it as its port.
static const int CLibWebSockets_PORT_NO_LISTEN = CONTEXT_PORT_NO_LISTEN;

/// Restricts libwebsockets' own logging to errors, or errors and warnings
/// (`LLL_*` are shifted macros Swift does not import reliably); every line goes to `emit`.
static inline void CLibWebSockets_set_log_level(int include_warnings, void (*emit)(int level, const char *line)) {
    lws_set_log_level(LLL_ERR | (include_warnings ? LLL_WARN : 0), emit);
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

/// The permessage-deflate extension as libwebsockets sees it: negotiated through it, so that it accepts frames with
/// RSV1 set, but a pass-through: payloads reach Lockstep as they arrived (it inflates them itself) and its pre-framed
/// writes bypass extensions. No option is echoed by libwebsockets; the server writes the response's parameters.
static inline int CLibWebSockets_deflate_passthrough(struct lws_context *context, const struct lws_extension *ext,
                                                     struct lws *wsi, enum lws_extension_callback_reasons reason,
                                                     void *user, void *in, size_t len) {
    static const struct lws_ext_options no_options[] = { { NULL, EXTARG_NONE } };
    if (reason == LWS_EXT_CB_CONSTRUCT)
        *(const struct lws_ext_options **)in = no_options;
    return 0;
}

/// The extension list of a server that offers permessage-deflate.
static inline const struct lws_extension *CLibWebSockets_deflate_extensions(void) {
    static const struct lws_extension extensions[] = {
        { "permessage-deflate", CLibWebSockets_deflate_passthrough, "permessage-deflate" },
        { NULL, NULL, NULL },
    };
    return extensions;
}

/// The RSV1 bit of the frame being received: set on the first frame of a compressed message.
static inline int CLibWebSockets_frame_is_compressed(struct lws *wsi) {
    return (lws_get_reserved_bits(wsi) & 0x40) != 0;
}

/// Whether the kernel holds input for reading on socket `fd` (peeks at one byte, without waiting or taking it).
static inline int CLibWebSockets_input_waiting(int fd) {
    char byte;
    return recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

/// Services `wsi`'s socket as readable now, as a pass of the loop would: one more read of its waiting input.
static inline void CLibWebSockets_read_again(struct lws *wsi) {
    struct lws_pollfd descriptor = { .fd = lws_get_socket_fd(wsi), .events = POLLIN, .revents = POLLIN };
    lws_service_fd(lws_get_context(wsi), &descriptor);
}

/// A libev loop for one context (epoll on Linux): libwebsockets' own loop passes every descriptor to poll(2) on each
/// pass, so its cost grows with idle connections; under an event library it is the descriptors that are ready.
static inline void *CLibWebSockets_event_loop_new(void) {
    return ev_loop_new(EVFLAG_AUTO);
}

/// Runs one pass: blocks until something is ready (an event, a timer, `lws_cancel_service`), then handles it.
static inline void CLibWebSockets_event_loop_run_once(void *loop) {
    ev_run((struct ev_loop *)loop, EVRUN_ONCE);
}

/// Has each pass first wait `seconds` for more descriptors to become ready, so that one pass handles many: fewer
/// wake-ups, at the cost of up to that much latency.
static inline void CLibWebSockets_event_loop_collect(void *loop, double seconds) {
    ev_set_io_collect_interval((struct ev_loop *)loop, seconds);
}

static inline void CLibWebSockets_event_loop_destroy(void *loop) {
    ev_loop_destroy((struct ev_loop *)loop);
}

/// A once-a-second wake of a context on a libev loop. libwebsockets 4.1 re-arms its libev timer for the earliest
/// timeout only after socket activity, and cannot bring an armed one forward, so a timeout falling due while the
/// loop is quiet (a half-sent request's) would wait for unrelated traffic. Each tick wakes the context as
/// `lws_cancel_service` does, which handles every timeout that is due: what its built-in loop does once a second.
typedef struct {
    ev_timer timer;
    struct lws_context *context;
} CLibWebSockets_tick;

static inline void CLibWebSockets_tick_fire(struct ev_loop *loop, ev_timer *timer, int revents) {
    lws_cancel_service(((CLibWebSockets_tick *)timer)->context);
}

static inline void *CLibWebSockets_tick_start(void *loop, struct lws_context *context) {
    CLibWebSockets_tick *tick = malloc(sizeof *tick);
    tick->context = context;
    ev_timer_init(&tick->timer, CLibWebSockets_tick_fire, 1.0, 1.0);
    ev_timer_start((struct ev_loop *)loop, &tick->timer);
    return tick;
}

static inline void CLibWebSockets_tick_stop(void *loop, void *tick) {
    ev_timer_stop((struct ev_loop *)loop, &((CLibWebSockets_tick *)tick)->timer);
    free(tick);
}

/// The context option that runs it on a libev loop (passed in as its foreign loop).
static inline uint64_t CLibWebSockets_event_loop_option(void) {
    return LWS_SERVER_OPTION_LIBEV;
}

/// Returns the allocator's free pages to the system (glibc's `malloc_trim`, not in Swift's Glibc module); a no-op
/// elsewhere.
static inline void CLibWebSockets_return_free_memory(void) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

#endif

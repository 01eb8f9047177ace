/*
 * baseline: the smallest honest libwebsockets broadcast server, the yardstick for `lockstep load`.
 *
 * No JSON parser, no reducer, no history: every text message a client sends is relayed to every
 * connection (the sender included) as a tiny patch, and the sender gets an ack, in the shapes the
 * load generator scans for:
 *
 *   on connect:        {"type":"snapshot","version":V}
 *   on each message:   {"type":"patch","version":N,"cause":{"id":"ID"}}   to everyone
 *                      {"type":"ack","id":"ID","version":N}               to the sender
 *
 * where ID is the value of the first "id":"..." in the message. With --patch-bytes N, each patch
 * carries a "pad" string before its cause that makes it N bytes long (Lockstep's patches of the
 * counter app are about 210), so that a comparison can tell the cost of the bytes from the rest.
 *
 * Frames waiting for one connection are pre-built (unmasked, 2/4/10-byte headers) in that connection's own buffer, behind LWS_PRE
 * bytes of headroom, and written together with ONE lws_write(LWS_WRITE_RAW) per writeable
 * callback: the coalescing that lets a server go past one send() per delivery.
 *
 * Build: cc -O2 -o baseline baseline.c -lwebsockets      Run: ./baseline --port 8090 [--patch-bytes N]
 */
#define _GNU_SOURCE /* memmem */
#include <libwebsockets.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TX_PACKET (256 * 1024)   /* lws caps one raw write at the protocol's tx_packet_size */
#define RX_MAX 4096              /* client messages are tiny actions; larger ones are dropped */
#define ID_MAX 128
#define PATCH_MAX 4096

static int patch_bytes;          /* --patch-bytes: pad each patch to this length; 0 leaves it as is */

struct session {
    struct lws *wsi;
    unsigned char *out;          /* LWS_PRE headroom, then `len` bytes of ready frames */
    size_t len, cap;
    int index;                   /* position in `sessions`, for O(1) removal */
    int writable_requested;
    char *rx;                    /* only for a message lws hands over in pieces */
    size_t rx_len;
    int rx_oversized;
};

static struct session **sessions;
static int session_count, session_cap;
static unsigned long long version;
static volatile sig_atomic_t interrupted;
static struct lws_context *context;

/* Appends one unmasked text frame to the session's pending bytes and asks for a writeable callback. */
static void queue_frame(struct session *s, const char *payload, size_t n)
{
    size_t need = LWS_PRE + s->len + 10 + n;
    if (need > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < need)
            cap *= 2;
        unsigned char *grown = realloc(s->out, cap);
        if (!grown)
            return; /* out of memory: drop this frame for this client */
        s->out = grown;
        s->cap = cap;
    }
    unsigned char *p = s->out + LWS_PRE + s->len;
    *p++ = 0x81; /* FIN + text */
    if (n < 126) {
        *p++ = (unsigned char)n;
    } else if (n < 65536) {
        *p++ = 126;
        *p++ = (unsigned char)(n >> 8);
        *p++ = (unsigned char)n;
    } else {
        *p++ = 127;
        for (int shift = 56; shift >= 0; shift -= 8)
            *p++ = (unsigned char)((unsigned long long)n >> shift);
    }
    memcpy(p, payload, n);
    p += n;
    s->len = (size_t)(p - (s->out + LWS_PRE));
    if (!s->writable_requested) {
        s->writable_requested = 1;
        lws_callback_on_writable(s->wsi);
    }
}

/* Writes up to TX_PACKET pending bytes in one raw write; keeps the rest for the next callback. */
static int flush(struct session *s)
{
    s->writable_requested = 0;
    if (!s->len)
        return 0;
    size_t n = s->len < TX_PACKET ? s->len : TX_PACKET;
    if (lws_write(s->wsi, s->out + LWS_PRE, n, LWS_WRITE_RAW) < (int)n)
        return -1;
    s->len -= n;
    if (!s->len) {
        /* Idle connections keep no buffer: a malloc per write is cheap next to the send() it feeds. */
        free(s->out);
        s->out = NULL;
        s->cap = 0;
    } else {
        memmove(s->out + LWS_PRE, s->out + LWS_PRE + n, s->len);
        s->writable_requested = 1;
        lws_callback_on_writable(s->wsi);
    }
    return 0;
}

/* One whole client message: bump the version, broadcast the patch, ack the sender. */
static void relay(struct session *sender, const char *msg, size_t n)
{
    char id[ID_MAX + 1] = "";
    static const char key[] = "\"id\":\"";
    const char *found = memmem(msg, n, key, sizeof key - 1);
    if (found) {
        const char *start = found + sizeof key - 1, *end = memchr(start, '"', n - (size_t)(start - msg));
        size_t idn = end ? (size_t)(end - start) : 0;
        if (idn > ID_MAX)
            idn = ID_MAX;
        memcpy(id, start, idn);
        id[idn] = 0;
    }
    version++;
    char patch[PATCH_MAX + ID_MAX + 96], ack[ID_MAX + 64];
    int pn = snprintf(patch, sizeof patch, "{\"type\":\"patch\",\"version\":%llu,\"cause\":{\"id\":\"%s\"}}",
                      version, id);
    if (patch_bytes >= pn + 9) {
        int head = snprintf(patch, sizeof patch, "{\"type\":\"patch\",\"version\":%llu,\"pad\":\"", version);
        int fill = patch_bytes - pn - 9; /* the pad member adds "pad":"", and a comma: 9 bytes */
        memset(patch + head, 'x', (size_t)fill);
        pn = head + fill + snprintf(patch + head + fill, sizeof patch - (size_t)(head + fill),
                                    "\",\"cause\":{\"id\":\"%s\"}}", id);
    }
    int an = snprintf(ack, sizeof ack, "{\"type\":\"ack\",\"id\":\"%s\",\"version\":%llu}", id, version);
    for (int i = 0; i < session_count; i++)
        queue_frame(sessions[i], patch, (size_t)pn);
    queue_frame(sender, ack, (size_t)an);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    struct session *s = user;
    switch (reason) {
    case LWS_CALLBACK_ESTABLISHED: {
        memset(s, 0, sizeof *s);
        s->wsi = wsi;
        if (session_count == session_cap) {
            session_cap = session_cap ? session_cap * 2 : 1024;
            sessions = realloc(sessions, (size_t)session_cap * sizeof *sessions);
            if (!sessions)
                return -1;
        }
        s->index = session_count;
        sessions[session_count++] = s;
        char snapshot[64];
        int n = snprintf(snapshot, sizeof snapshot, "{\"type\":\"snapshot\",\"version\":%llu}", version);
        queue_frame(s, snapshot, (size_t)n);
        break;
    }
    case LWS_CALLBACK_CLOSED:
        if (s->wsi) {
            struct session *last = sessions[--session_count];
            sessions[s->index] = last;
            last->index = s->index;
            free(s->out);
            free(s->rx);
            s->out = NULL;
            s->rx = NULL;
            s->wsi = NULL;
        }
        break;
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return flush(s);
    case LWS_CALLBACK_RECEIVE:
        if (lws_frame_is_binary(wsi))
            break;
        int last = lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi);
        if (last && !s->rx_len && !s->rx_oversized) {
            relay(s, in, len); /* the usual case: the whole message in one piece */
            break;
        }
        if (!s->rx && !(s->rx = malloc(RX_MAX)))
            return -1;
        if (s->rx_len + len > RX_MAX)
            s->rx_oversized = 1;
        else {
            memcpy(s->rx + s->rx_len, in, len);
            s->rx_len += len;
        }
        if (last) {
            if (!s->rx_oversized)
                relay(s, s->rx, s->rx_len);
            s->rx_len = 0;
            s->rx_oversized = 0;
        }
        break;
    default:
        break;
    }
    return 0;
}

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
    lws_cancel_service(context);
}

int main(int argc, char **argv)
{
    int port = 8090;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--port") && i + 1 < argc)
            port = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--patch-bytes") && i + 1 < argc && atoi(argv[i + 1]) <= PATCH_MAX)
            patch_bytes = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--port N] [--patch-bytes N]   (N = 0 picks a free port; at most %d bytes)\n",
                    argv[0], PATCH_MAX);
            return 2;
        }
    }
    lws_set_log_level(LLL_ERR, NULL);

    static struct lws_protocols protocols[] = {
        { "baseline", callback, sizeof(struct session), RX_MAX, 0, NULL, TX_PACKET },
        { NULL, NULL, 0, 0, 0, NULL, 0 }
    };
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = port;
    info.iface = "127.0.0.1";
    info.protocols = protocols;
    info.options = LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND | LWS_SERVER_OPTION_DISABLE_IPV6;
    info.pt_serv_buf_size = 32 * 1024;
    context = lws_create_context(&info);
    if (!context) {
        fprintf(stderr, "baseline: cannot listen on 127.0.0.1:%d (port in use?)\n", port);
        return 1;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    struct lws_vhost *vhost = lws_get_vhost_by_name(context, "default");
    printf("baseline: relaying on ws://127.0.0.1:%d/rooms/ROOM\n", lws_get_vhost_listen_port(vhost));
    fflush(stdout);
    while (!interrupted)
        if (lws_service(context, 0) < 0)
            break;
    lws_context_destroy(context);
    free(sessions);
    return 0;
}

/* How a producer (an application through libperflink, or the preload
 * library's reporter) and perflinkd find each other, and the shared memory
 * between them.
 *
 * 1. The producer connects to perflinkd's producer socket (a unix
 *    SOCK_SEQPACKET socket; the daemon checks the peer's credentials) and
 *    sends one struct pl_producer_hello saying what it needs.
 * 2. perflinkd makes the shared memory itself (a sealed memfd where the
 *    kernel has one, so the producer can neither shrink nor grow it under
 *    the daemon) and answers with one struct pl_producer_welcome carrying
 *    the layout, with the memory's fd attached (SCM_RIGHTS).
 * 3. From then on the socket carries wakeups both ways, one byte each
 *    (its value means nothing), sent and read by both sides with
 *    MSG_DONTWAIT, and says "still here": when it closes, the other side
 *    knows the peer is gone. Wakeups are not eventfds because an fd passed
 *    with SCM_RIGHTS shares its open file, and with it O_NONBLOCK: a
 *    producer that cleared the flag, or read the daemon's wakeups from
 *    another thread, could make perflinkd block in write() or read() for
 *    good. A send that finds the socket full drops the byte: wakeups are
 *    already waiting then.
 *
 * The memory (offsets in the welcome):
 *   struct pl_producer_shm           counters and the frame slots' states
 *   records ring (producer → daemon) frames ready in a slot, telemetry lines
 *   replies ring (daemon → producer) the host's replies to this producer's frames
 *   frame slots                      slot_count × slot_bytes, written in place
 *
 * A frame: the producer takes a FREE slot (FREE → WRITING, its own business),
 * writes the frame into it, marks it READY and pushes a PL_REC_FRAME record
 * naming it, then sends a wakeup. perflinkd checks the record, hands the
 * slot's bytes to the link without copying them, marks the slot FREE and
 * sends a wakeup back. Replies arrive the same way in the other direction.
 *
 * On the wire a producer's frame_id carries the producer's number in its top
 * 16 bits (PL_PRODUCER_FRAME_ID), so that the host's reply finds its way
 * back; the producer sees only its own 48-bit frame ids. */
#ifndef PL_COMMON_PRODUCER_PROTO_H
#define PL_COMMON_PRODUCER_PROTO_H

#include <stdatomic.h>
#include <stdint.h>

#include "shm_ring.h"

#define PL_PRODUCER_MAGIC 0x52504c50u /* "PLPR" */
#define PL_PRODUCER_VERSION 2 /* 2: wakeups on the socket, no eventfds */
#define PL_PRODUCER_MAX_SLOTS 32
#define PL_PRODUCER_NAME_MAX 32

#define PL_PRODUCER_FRAME_ID_BITS 48
#define PL_PRODUCER_FRAME_ID_MASK ((UINT64_C(1) << PL_PRODUCER_FRAME_ID_BITS) - 1)
#define PL_PRODUCER_FRAME_ID(producer, id) \
	(((uint64_t)(producer) << PL_PRODUCER_FRAME_ID_BITS) | ((id) & PL_PRODUCER_FRAME_ID_MASK))

struct pl_producer_hello {
	uint32_t magic;
	uint16_t version;
	uint16_t flags;            /* PL_HELLO_* */
	uint32_t slot_count;       /* 0 for a telemetry-only producer */
	uint32_t slot_bytes;       /* the largest frame */
	uint32_t records_bytes;    /* producer → daemon ring */
	uint32_t replies_bytes;    /* daemon → producer ring (0: no replies) */
	char name[PL_PRODUCER_NAME_MAX]; /* for logs; NUL-padded */
};

/* Hello flags. */
#define PL_HELLO_KEEP_EVERY_FRAME 0x1u /* frames wait for room, never replaced */
/* The producer sends no wakeups after the hello: perflinkd drains it every
 * PL_PRODUCER_POLL_MS instead. The preload library's, which must not write
 * to a descriptor its target may have closed and taken back with a raw
 * close_range system call, which no hook sees. */
#define PL_HELLO_POLLED 0x2u
#define PL_PRODUCER_POLL_MS 100
#define PL_HELLO_KNOWN_FLAGS (PL_HELLO_KEEP_EVERY_FRAME | PL_HELLO_POLLED)

struct pl_producer_welcome {
	uint32_t magic;
	uint16_t version;
	int16_t status;            /* 0, or a negative errno with message set */
	uint32_t producer_id;      /* 1..65535 */
	uint32_t slot_count, slot_bytes;
	uint32_t records_cap, replies_cap;
	uint32_t flags;            /* the hello's flags this daemon honours */
	uint64_t shm_bytes;
	uint64_t records_off, replies_off, slots_off;
	char message[128];
};

enum pl_slot_state { PL_SLOT_FREE = 0, PL_SLOT_WRITING = 1, PL_SLOT_READY = 2 };

/* Record kinds. */
enum pl_producer_record {
	PL_REC_FRAME = 1,     /* struct pl_producer_frame_rec */
	PL_REC_TELEMETRY = 2, /* JSON lines, each ending in '\n' */
	PL_REC_REPLY = 3,     /* u64 frame_id (the producer's), then the reply bytes */
};

struct pl_producer_frame_rec {
	uint32_t slot;
	uint32_t len;
	uint64_t frame_id;    /* the producer's own, 48 bits */
	uint32_t flags;       /* PL_FRAME_REC_HASHED */
	uint32_t pad;
	uint64_t payload_xxh3; /* with PL_FRAME_REC_HASHED: the wire checksum */
};
/* The producer computed the frame's wire checksum (XXH3-64) when it made
 * the frame, so perflinkd only submits it. A wrong one only makes the host
 * reject that producer's own frame. */
#define PL_FRAME_REC_HASHED 0x1u

/* At offset 0 of the shared memory. */
struct pl_producer_shm {
	uint32_t magic, version;
	uint32_t pad[14];
	struct pl_shm_ring_ctl records;
	struct pl_shm_ring_ctl replies;
	/* written by the producer */
	_Atomic uint32_t records_dropped;
	_Atomic uint32_t frames_committed;
	/* written by perflinkd */
	_Atomic uint32_t replies_dropped;
	_Atomic uint32_t frames_sent, frames_held, frames_not_sent;
	_Atomic uint32_t slot_state[PL_PRODUCER_MAX_SLOTS];
};

#endif

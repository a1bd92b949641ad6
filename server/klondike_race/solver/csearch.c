/* The solver's compiled core: search.py's Search in C (docs/solver.md, "The compiled
 * core"). The same search, position for position: the same classes and keys, the same
 * moves in the same order (the restarts' random orders from the same Mersenne Twister as
 * Python's random.Random), the same cuts, the same Draw 1 relaxation tests, so the same
 * answers, positions and lines (tests/solver/test_native.py compares the two on the
 * reference deals). search.py is the readable one: every function here is named after
 * its counterpart there and says only what C changes.
 *
 * What C changes: the position lives in fixed arrays; a key is at most 46 bytes and the
 * sets of keys (seen, lost, the relaxation's lost and won) are open-addressing tables of
 * 48-byte slots; a node of Tarjan's bookkeeping (a key, or a key with an obligation) is
 * the number of its entry in ``seen`` with the obligation beside it; a move's steps live
 * on one stack (a move's steps are always undone last in, first out).
 *
 * Built by native.py (``klondike-race build-solver``) with SOURCE_SHA256 defined as this
 * file's SHA-256, so that an edited source is never shadowed by an old build. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef SOURCE_SHA256
#define SOURCE_SHA256 ""
#endif

enum { MOVE = 0, HOME = 1, SWAP_HOME = 2, DECK = 3, FOUND = 4 };
#define KING 13
#define EMPTY_OB 100
/* a column holds at most 6 face-down cards and 13 face-up ones (Search refuses more);
 * 32 is room for any position of distinct cards that moves can reach from those */
#define MAXCOL 32
#define MAXDECK 24
/* a key: 16 bytes (make_key); an entry of ``seen``: the key, then its obligations
 * (``obs``, at 16) and the visit number of its node without obligation (at 24; -1 when
 * not on Tarjan's stack): half a cache line, so a visit touches one line of the table */
#define KEYLEN 16
#define SEEN_STRIDE 32
#define MAXMOVES 512
/* as in search.py */
#define TEST_AFTER 1024
#define TEST_MAX 32768
#define TEST_GROWTH 2
#define TEST_RATIO 8
#define FREE_FAILS 16
#define FAILS_PER_CUT 2

static int RANK[52], SUIT[52], TWIN[52];
static int HOLDS[52][2], NHOLDS[52];   /* the cards that may go on a card, ascending */
static int PARENTS[52][2], NPARENTS[52]; /* the cards a card may go on, ascending */
static const int KINGS[4] = {12, 25, 38, 51};

static void init_cards(void) {
    for (int c = 0; c < 52; c++) {
        RANK[c] = c % 13 + 1;
        SUIT[c] = c / 13;
        TWIN[c] = (3 - SUIT[c]) * 13 + RANK[c] - 1;
    }
    for (int t = 0; t < 52; t++) {
        NHOLDS[t] = NPARENTS[t] = 0;
    }
    for (int t = 0; t < 52; t++) {
        bool red_t = SUIT[t] == 1 || SUIT[t] == 2;
        for (int c = 0; c < 52; c++) {
            bool red_c = SUIT[c] == 1 || SUIT[c] == 2;
            if (RANK[t] == RANK[c] + 1 && red_t != red_c) {
                HOLDS[t][NHOLDS[t]++] = c;  /* c ascending */
            }
        }
    }
    for (int c = 0; c < 52; c++) {
        for (int p = 0; p < 52; p++) {
            for (int k = 0; k < NHOLDS[p]; k++) {
                if (HOLDS[p][k] == c) PARENTS[c][NPARENTS[c]++] = p;
            }
        }
    }
}

/* ---- sets of keys ------------------------------------------------------------------- */

/* Linear probing; a slot holds the key's 32-bit tag (the hash's top half) and its entry
 * number + 1 (0: empty). A key's first slot is the top bits of its tag, so the slots are
 * in the order of their tags: growing the table moves them in order, from the tags alone
 * (two streams of writes, no key read). */
typedef struct {
    uint64_t *slots;
    size_t mask;
    int shift; /* 32 - log2(slots): a tag's first slot is tag >> shift */
    /* the entries (each a key, and in seen what follows it), in chunks that are never
     * moved: chunk 0 holds the first cap0 entries, chunk k >= 1 the entries from
     * cap0 << (k - 1) to cap0 << k (a table that doubles adds a chunk, copying nothing) */
    uint8_t *chunks[40];
    int cap0_bits;
    size_t stride; /* KEYLEN, or SEEN_STRIDE for a search's seen */
    size_t n, cap;
} KeyTable;

static inline uint8_t *entry_at(const KeyTable *t, long e) {
    size_t q = (size_t)e >> t->cap0_bits;
    if (!q) return t->chunks[0] + (size_t)e * t->stride;
    int k = 64 - __builtin_clzll(q); /* q in [2^(k-1), 2^k) */
    size_t start = (size_t)1 << (t->cap0_bits + k - 1);
    return t->chunks[k] + ((size_t)e - start) * t->stride;
}

static inline uint64_t *entry_obs(const KeyTable *t, long e) {
    return (uint64_t *)(entry_at(t, e) + 16);
}
static inline int64_t *entry_number(const KeyTable *t, long e) {
    return (int64_t *)(entry_at(t, e) + 24);
}

/* an entry's ``obs``: bit 63, seen with no obligation (search.py's -1); bit ob for a card
 * obligation, bit 52 for EMPTY_OB */
#define OB_NONE (1ULL << 63)
static inline uint64_t ob_bit(int ob) {
    return ob < 0 ? OB_NONE : ob == EMPTY_OB ? 1ULL << 52 : 1ULL << ob;
}
/* search.py's _covers: seen with no obligation, or with ob */
static inline bool covers(uint64_t old, int ob) {
    return (old & OB_NONE) || (ob >= 0 && (old & ob_bit(ob)));
}

/* The tag comes from all the key's bytes but the last (the deck pointer), with the
 * pointer (below 32) xored into its 5 lowest bits: the keys that differ only in the
 * pointer, which pointer dominance looks up one after another, start from the same slot
 * (from nearby ones in tables of 2^28 slots or more) and lie side by side, and their
 * tags tell them apart without reading the keys. */
static inline uint64_t hash_key(const uint8_t *k) {
    uint64_t a, b;
    memcpy(&a, k, 8);
    memcpy(&b, k + 8, 8);
    uint64_t pointer = (uint64_t)k[KEYLEN - 1] << 32;
    b &= 0x00FFFFFFFFFFFFFFULL;
    uint64_t h = (a ^ 0x9E3779B97F4A7C15ULL) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
    h = (h ^ b) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 29;
    h *= 0x9E3779B97F4A7C15ULL;
    h ^= h >> 32;
    return h ^ pointer;
}

static inline bool same_key(const uint8_t *x, const uint8_t *y) {
    uint64_t a, b, c, d;
    memcpy(&a, x, 8);
    memcpy(&b, x + 8, 8);
    memcpy(&c, y, 8);
    memcpy(&d, y + 8, 8);
    return a == c && b == d;
}

/* The tables of a long search reach hundreds of megabytes, read at random: in 2 MB pages
 * (where the kernel gives them on request: transparent huge pages set to madvise) a
 * lookup misses the TLB far less often. Small arrays come from malloc. */
#define HUGE_PAGE ((size_t)1 << 21)

static void *big_alloc(size_t size) {
    if (size < HUGE_PAGE) return malloc(size);
    size = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    void *p = aligned_alloc(HUGE_PAGE, size);
#ifdef MADV_HUGEPAGE
    if (p) madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

static void *big_calloc(size_t size) {
    void *p = big_alloc(size);
    if (p) memset(p, 0, size);
    return p;
}

static int log2_of(size_t n) {
    int k = 0;
    while (((size_t)1 << k) < n) k++;
    return k;
}

static int table_init(KeyTable *t, size_t slots, size_t stride) {
    memset(t, 0, sizeof *t);
    t->slots = big_calloc(slots * sizeof(uint64_t));
    t->mask = slots - 1;
    t->shift = 32 - log2_of(slots);
    t->cap = slots / 2;
    t->cap0_bits = log2_of(t->cap);
    t->stride = stride;
    t->chunks[0] = big_alloc(t->cap * stride);
    if (!t->slots || !t->chunks[0]) return -1;
    return 0;
}

static void table_free(KeyTable *t) {
    free(t->slots);
    for (int k = 0; k < 40; k++) free(t->chunks[k]);
    memset(t, 0, sizeof *t);
}

/* the entry of a key, or -1 */
static inline long table_find(const KeyTable *t, const uint8_t *k, uint64_t h) {
    uint64_t tag = h >> 32 << 32;
    size_t i = (size_t)(h >> 32) >> t->shift;
    for (;;) {
        uint64_t s = t->slots[i];
        if (!s) return -1;
        if ((s & 0xFFFFFFFF00000000ULL) == tag) {
            long e = (long)(s & 0xFFFFFFFFULL) - 1;
            if (same_key(entry_at(t, e), k)) return e;
        }
        i = (i + 1) & t->mask;
    }
}

static int table_grow(KeyTable *t) {
    size_t slots = (t->mask + 1) * 2;
    int k = log2_of(t->cap) - t->cap0_bits + 1; /* the chunk of entries cap .. 2 cap */
    if (k >= 40 || t->shift < 1) return -1;
    uint64_t *fresh = big_calloc(slots * sizeof(uint64_t));
    uint8_t *chunk = big_alloc(t->cap * t->stride);
    if (!fresh || !chunk) {
        free(fresh);
        free(chunk);
        return -1;
    }
    t->chunks[k] = chunk;
    int shift = t->shift - 1;
    for (size_t j = 0; j <= t->mask; j++) {
        uint64_t slot = t->slots[j];
        if (!slot) continue;
        size_t i = (size_t)(slot >> 32) >> shift;
        while (fresh[i]) i = (i + 1) & (slots - 1);
        fresh[i] = slot;
    }
    free(t->slots);
    t->slots = fresh;
    t->shift = shift;
    t->mask = slots - 1;
    t->cap = slots / 2;
    return 0;
}

/* a new entry for a key not in the table (in seen: no obligation, no node); -1 when
 * memory ran out */
static long table_insert(KeyTable *t, const uint8_t *k, uint64_t h) {
    if (t->n >= t->cap && table_grow(t) < 0) return -1;
    size_t i = (size_t)(h >> 32) >> t->shift;
    while (t->slots[i]) i = (i + 1) & t->mask;
    long e = (long)t->n++;
    t->slots[i] = (h >> 32 << 32) | (uint64_t)(e + 1);
    memcpy(entry_at(t, e), k, KEYLEN);
    if (t->stride == SEEN_STRIDE) {
        *entry_obs(t, e) = 0;
        *entry_number(t, e) = -1;
    }
    return e;
}

/* the entry of a key, added if new; -1 when memory ran out */
static long table_add(KeyTable *t, const uint8_t *k, uint64_t h) {
    long e = table_find(t, k, h);
    return e >= 0 ? e : table_insert(t, k, h);
}

static inline bool table_has(const KeyTable *t, const uint8_t *k) {
    return t->n && table_find(t, k, hash_key(k)) >= 0;
}

/* ---- Tarjan's visit numbers: node -> number, with deletion ------------------------- */

/* a node: (entry in seen) * 128 + obligation + 1 (the obligation -1, 0-51 or 100) */
typedef struct {
    uint64_t *nodes; /* UINT64_MAX: empty */
    int64_t *numbers;
    size_t mask, n;
} NodeMap;

#define NO_NODE UINT64_MAX
static inline uint64_t node_of(long entry, int ob) { return (uint64_t)entry * 128 + (uint64_t)(ob + 1); }
static inline long node_entry(uint64_t node) { return (long)(node / 128); }
static inline int node_ob(uint64_t node) { return (int)(node % 128) - 1; }
static inline size_t node_hash(uint64_t node, size_t mask) {
    return (size_t)((node * 0x9E3779B97F4A7C15ULL) >> 20) & mask;
}

static int nodes_init(NodeMap *m, size_t slots) {
    m->nodes = big_alloc(slots * sizeof(uint64_t));
    m->numbers = big_alloc(slots * sizeof(int64_t));
    m->mask = slots - 1;
    m->n = 0;
    if (!m->nodes || !m->numbers) return -1;
    memset(m->nodes, 0xFF, slots * sizeof(uint64_t));
    return 0;
}

static void nodes_free(NodeMap *m) {
    free(m->nodes);
    free(m->numbers);
    memset(m, 0, sizeof *m);
}

/* the node's visit number, or -1 */
static inline int64_t nodes_get(const NodeMap *m, uint64_t node) {
    size_t i = node_hash(node, m->mask);
    for (;;) {
        uint64_t s = m->nodes[i];
        if (s == node) return m->numbers[i];
        if (s == NO_NODE) return -1;
        i = (i + 1) & m->mask;
    }
}

static int nodes_put(NodeMap *m, uint64_t node, int64_t number) {
    if ((m->n + 1) * 2 > m->mask + 1) {
        NodeMap bigger;
        if (nodes_init(&bigger, (m->mask + 1) * 2) < 0) {
            nodes_free(&bigger);
            return -1;
        }
        for (size_t i = 0; i <= m->mask; i++) {
            if (m->nodes[i] != NO_NODE) {
                size_t j = node_hash(m->nodes[i], bigger.mask);
                while (bigger.nodes[j] != NO_NODE) j = (j + 1) & bigger.mask;
                bigger.nodes[j] = m->nodes[i];
                bigger.numbers[j] = m->numbers[i];
                bigger.n++;
            }
        }
        nodes_free(m);
        *m = bigger;
    }
    size_t i = node_hash(node, m->mask);
    while (m->nodes[i] != NO_NODE && m->nodes[i] != node) i = (i + 1) & m->mask;
    if (m->nodes[i] == NO_NODE) m->n++;
    m->nodes[i] = node;
    m->numbers[i] = number;
    return 0;
}

static void nodes_del(NodeMap *m, uint64_t node) {
    size_t i = node_hash(node, m->mask);
    while (m->nodes[i] != node) {
        if (m->nodes[i] == NO_NODE) return;
        i = (i + 1) & m->mask;
    }
    /* backward-shift deletion (linear probing keeps no tombstones) */
    size_t j = i;
    for (;;) {
        j = (j + 1) & m->mask;
        if (m->nodes[j] == NO_NODE) break;
        size_t home = node_hash(m->nodes[j], m->mask);
        /* move j back to i unless its home lies cyclically in (i, j] */
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (!stays) {
            m->nodes[i] = m->nodes[j];
            m->numbers[i] = m->numbers[j];
            i = j;
        }
    }
    m->nodes[i] = NO_NODE;
    m->n--;
}

/* a node's visit number (-1: none), kept in its seen entry when it has no obligation */
static inline int64_t node_number(const KeyTable *seen, const NodeMap *m, uint64_t node) {
    return node_ob(node) == -1 ? *entry_number(seen, node_entry(node)) : nodes_get(m, node);
}

static inline int node_set(KeyTable *seen, NodeMap *m, uint64_t node, int64_t number) {
    if (node_ob(node) == -1) {
        *entry_number(seen, node_entry(node)) = number;
        return 0;
    }
    return nodes_put(m, node, number);
}

static inline void node_remove(KeyTable *seen, NodeMap *m, uint64_t node) {
    if (node_ob(node) == -1) {
        *entry_number(seen, node_entry(node)) = -1;
    } else {
        nodes_del(m, node);
    }
}

/* ---- Python's random.Random (MT19937), for the restarts' orders ------------------- */

typedef struct {
    uint32_t mt[624];
    int mti;
} Twister;

static void mt_init_genrand(Twister *r, uint32_t s) {
    r->mt[0] = s;
    for (int i = 1; i < 624; i++) {
        r->mt[i] = 1812433253U * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
    }
    r->mti = 624;
}

/* random.Random(seed) for a non-negative int seed below 2**64 (init_by_array of its
 * 32-bit words, least significant first) */
static void mt_seed(Twister *r, uint64_t seed) {
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    int klen = key[1] ? 2 : 1;
    mt_init_genrand(r, 19650218U);
    int i = 1, j = 0;
    for (int k = 624 > klen ? 624 : klen; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1664525U)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= 624) {
            r->mt[0] = r->mt[623];
            i = 1;
        }
        if (j >= klen) j = 0;
    }
    for (int k = 623; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1566083941U)) - (uint32_t)i;
        i++;
        if (i >= 624) {
            r->mt[0] = r->mt[623];
            i = 1;
        }
    }
    r->mt[0] = 0x80000000U;
}

static uint32_t mt_next(Twister *r) {
    static const uint32_t mag01[2] = {0x0U, 0x9908b0dfU};
    uint32_t y;
    if (r->mti >= 624) {
        int kk;
        for (kk = 0; kk < 624 - 397; kk++) {
            y = (r->mt[kk] & 0x80000000U) | (r->mt[kk + 1] & 0x7fffffffU);
            r->mt[kk] = r->mt[kk + 397] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        for (; kk < 623; kk++) {
            y = (r->mt[kk] & 0x80000000U) | (r->mt[kk + 1] & 0x7fffffffU);
            r->mt[kk] = r->mt[kk + (397 - 624)] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        y = (r->mt[623] & 0x80000000U) | (r->mt[0] & 0x7fffffffU);
        r->mt[623] = r->mt[396] ^ (y >> 1) ^ mag01[y & 0x1U];
        r->mti = 0;
    }
    y = r->mt[r->mti++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
}

static double mt_random(Twister *r) {
    uint32_t a = mt_next(r) >> 5, b = mt_next(r) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

static int bit_length(unsigned n) {
    int k = 0;
    while (n) {
        k++;
        n >>= 1;
    }
    return k;
}

/* search.py's _shuffle: CPython's Fisher-Yates over getrandbits (k <= 32 here) */
typedef struct {
    int8_t kind, a, b, c;
} Move;

static void shuffle_moves(Twister *r, Move *items, int n) {
    for (int i = n - 1; i > 0; i--) {
        unsigned size = (unsigned)i + 1;
        int k = bit_length(size);
        unsigned j = mt_next(r) >> (32 - k);
        while (j >= size) j = mt_next(r) >> (32 - k);
        Move t = items[i];
        items[i] = items[j];
        items[j] = t;
    }
}

/* ---- the search ---------------------------------------------------------------------- */

/* a primitive step, with what undo needs: 'm' (a = src, b = dst, c = count, flipped),
 * 'h' (a = src, b = card, flipped), 'w' (a = card, b = dst, c = index, p and rec
 * before), 'f' (a = suit, b = dst) */
typedef struct {
    char kind;
    int8_t a, b, c;
    bool flipped;
    uint8_t p, rec;
} Step;

/* one move's steps on the step stack: [start, end); ``own`` of them the move's own (the
 * rest its safe cards home); ``ob`` the obligation before it */
typedef struct {
    int start, end, own, ob;
} Done;

typedef struct {
    int moves, nmoves; /* its moves: movebuf[moves .. moves + nmoves) */
    int next;
    int64_t number, low;
    int64_t top;
    int64_t states, test;
} Frame;

typedef struct SearchState {
    int8_t cols[7][MAXCOL];
    int ncol[7], down[7], found[4];
    int8_t deck[MAXDECK];
    int ndeck, p, rec;
    int8_t where[52];
    int8_t root_bit[52]; /* each card's place in the starting deck (the key's deck bits) */
    int draw, allowed; /* allowed: -1 for unlimited */
    bool any_empty, f2c, deck_first, prune, park, use_p, use_rec, cycle, deadlock_test, tests;
    bool has_rng;
    Twister rng;
    int64_t states, relaxed_states, visits;
    int64_t cuts, fails;
    int ob;
    bool started;
    KeyTable seen;
    NodeMap idx;
    uint64_t *tstack;
    int64_t ntstack, captstack;
    Frame *frames;
    int nframes, capframes;
    Move *movebuf;
    int nmovebuf, capmovebuf;
    Step *steps;
    int nsteps, capsteps;
    Done *path;
    int npath, cappath;
    Step start[128];
    int nstart;
    KeyTable *lost;       /* shared with other searches of the same position */
    KeyTable *relax_lost; /* the relaxation's (NULL: none) */
    KeyTable *relax_won;
    KeyTable *known_won; /* NULL: none */
    bool oom;
} SearchState;

#define GROW(ptr, n, cap, extra)                                                   \
    do {                                                                           \
        if ((n) + (extra) > (cap)) {                                               \
            int _cap = (cap) ? (cap) : 64;                                         \
            while ((n) + (extra) > _cap) _cap *= 2;                                \
            void *_p = realloc((ptr), (size_t)_cap * sizeof *(ptr));               \
            if (!_p) {                                                             \
                s->oom = true;                                                     \
                return -1;                                                         \
            }                                                                      \
            (ptr) = _p;                                                            \
            (cap) = _cap;                                                          \
        }                                                                          \
    } while (0)

static int state_init(SearchState *s) {
    if (table_init(&s->seen, 1024, SEEN_STRIDE) < 0 || nodes_init(&s->idx, 64) < 0) {
        s->oom = true;
        return -1;
    }
    return 0;
}

static void state_free(SearchState *s) {
    table_free(&s->seen);
    nodes_free(&s->idx);
    free(s->tstack);
    free(s->frames);
    free(s->movebuf);
    free(s->steps);
    free(s->path);
    s->tstack = NULL;
    s->frames = NULL;
    s->movebuf = NULL;
    s->steps = NULL;
    s->path = NULL;
}

/* ---- the class key (search.py's key, packed) ----
 * search.py's key as 16 bytes, the same classes: bytes 0-7 the face-down counts (3 bits
 * each), the foundations (4 bits each) from bit 21, the recycles used (3 bits) from bit 37
 * and the deck from bit 40, as the set of the cards left (the deck only ever loses cards
 * and keeps its order, so which of the starting deck's cards are left says what it is:
 * bit i for the starting deck's card i; every search that shares keys starts from the
 * same deck); bytes 8-14 the roots as a set of cards (52 bits; roots are distinct cards,
 * so the sorted multiset and the set say the same); byte 15 the pointer. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the key's byte 15 must be the pointer's: little-endian only"
#endif
#define REC_BITS (7ULL << 37)

static void make_key(const SearchState *s, uint8_t *k) {
    uint64_t a = 0, roots = 0, deck = 0;
    for (int i = 0; i < 7; i++) {
        a |= (uint64_t)s->down[i] << (3 * i);
        if (!s->down[i] && s->ncol[i]) roots |= 1ULL << s->cols[i][0];
    }
    for (int i = 0; i < 4; i++) a |= (uint64_t)s->found[i] << (21 + 4 * i);
    if (s->use_rec) a |= (uint64_t)s->rec << 37;
    for (int i = 0; i < s->ndeck; i++) deck |= 1ULL << s->root_bit[s->deck[i]];
    a |= deck << 40;
    int p = s->p;
    if (!s->use_p) {
        p = 0;
    } else if (s->cycle && (p % s->draw == 0 || p == s->ndeck)) {
        p = 0;
    }
    roots |= (uint64_t)p << 56;
    memcpy(k, &a, 8);
    memcpy(k + 8, &roots, 8);
}

/* search.py's _relaxed_key: no recycles used, pointer 0 */
static void relaxed_key(const uint8_t *k, uint8_t *rk) {
    uint64_t a;
    memcpy(&a, k, 8);
    a &= ~REC_BITS;
    memcpy(rk, &a, 8);
    memcpy(rk + 8, k + 8, 7);
    rk[KEYLEN - 1] = 0;
}

/* ---- primitive steps ---- */
static inline int push_step(SearchState *s, Step st) {
    GROW(s->steps, s->nsteps, s->capsteps, 1);
    s->steps[s->nsteps++] = st;
    return 0;
}

static Step step_move(SearchState *s, int src, int d, int n) {
    int8_t *from = s->cols[src], *to = s->cols[d];
    int start = s->ncol[src] - n;
    for (int i = 0; i < n; i++) {
        int8_t c = from[start + i];
        to[s->ncol[d] + i] = c;
        s->where[c] = (int8_t)d;
    }
    s->ncol[d] += n;
    s->ncol[src] = start;
    bool flipped = start > 0 && start == s->down[src];
    if (flipped) s->down[src]--;
    return (Step){'m', (int8_t)src, (int8_t)d, (int8_t)n, flipped, 0, 0};
}

static Step step_home(SearchState *s, int src) {
    int8_t c = s->cols[src][--s->ncol[src]];
    s->where[c] = -1;
    s->found[SUIT[c]]++;
    bool flipped = s->ncol[src] > 0 && s->ncol[src] == s->down[src];
    if (flipped) s->down[src]--;
    return (Step){'h', (int8_t)src, c, 0, flipped, 0, 0};
}

static Step step_deck(SearchState *s, int i, int d, int r) {
    int8_t c = s->deck[i];
    Step st = {'w', c, (int8_t)d, (int8_t)i, false, (uint8_t)s->p, (uint8_t)s->rec};
    memmove(s->deck + i, s->deck + i + 1, (size_t)(s->ndeck - i - 1));
    s->ndeck--;
    s->p = i;
    s->rec += r;
    if (d < 0) {
        s->found[SUIT[c]]++;
    } else {
        s->cols[d][s->ncol[d]++] = c;
        s->where[c] = (int8_t)d;
    }
    return st;
}

static Step step_f2c(SearchState *s, int suit, int d) {
    s->found[suit]--;
    int8_t c = (int8_t)(suit * 13 + s->found[suit]);
    s->cols[d][s->ncol[d]++] = c;
    s->where[c] = (int8_t)d;
    return (Step){'f', (int8_t)suit, (int8_t)d, 0, false, 0, 0};
}

static void undo_step(SearchState *s, const Step *st) {
    if (st->kind == 'm') {
        int src = st->a, d = st->b, n = st->c;
        if (st->flipped) s->down[src]++;
        int start = s->ncol[d] - n;
        for (int i = 0; i < n; i++) {
            int8_t c = s->cols[d][start + i];
            s->cols[src][s->ncol[src] + i] = c;
            s->where[c] = (int8_t)src;
        }
        s->ncol[src] += n;
        s->ncol[d] = start;
    } else if (st->kind == 'h') {
        int src = st->a;
        int8_t c = st->b;
        if (st->flipped) s->down[src]++;
        s->cols[src][s->ncol[src]++] = c;
        s->where[c] = (int8_t)src;
        s->found[SUIT[c]]--;
    } else if (st->kind == 'w') {
        int8_t c = st->a;
        int d = st->b, i = st->c;
        s->p = st->p;
        s->rec = st->rec;
        memmove(s->deck + i + 1, s->deck + i, (size_t)(s->ndeck - i));
        s->deck[i] = c;
        s->ndeck++;
        if (d < 0) {
            s->found[SUIT[c]]--;
        } else {
            s->ncol[d]--;
            s->where[c] = -1;
        }
    } else {
        int d = st->b;
        s->where[s->cols[d][--s->ncol[d]]] = -1;
        s->found[st->a]++;
    }
}

static inline int deck_index(const SearchState *s, int c) {
    for (int i = 0; i < s->ndeck; i++) {
        if (s->deck[i] == c) return i;
    }
    return -1;
}

static inline int col_index(const SearchState *s, int col, int c) {
    for (int i = 0; i < s->ncol[col]; i++) {
        if (s->cols[col][i] == c) return i;
    }
    return -1;
}

static inline int other_colour(const int *found, int suit) {
    int a, b;
    if (suit == 0 || suit == 3) {
        a = found[1];
        b = found[2];
    } else {
        a = found[0];
        b = found[3];
    }
    return a < b ? a : b;
}

/* ---- cards that can go home (search.py's _autos): steps pushed on the step stack, or
 * into ``start`` before the search starts ---- */
static int add_step(SearchState *s, Step st, bool to_start) {
    if (to_start) {
        if (s->nstart >= 128) {
            s->oom = true;
            return -1;
        }
        s->start[s->nstart++] = st;
        return 0;
    }
    return push_step(s, st);
}

static int autos(SearchState *s, bool to_start) {
    int *found = s->found;
    bool again = true;
    while (again) {
        again = false;
        for (int suit = 0; suit < 4; suit++) {
            int n = found[suit];
            if (n == 13) continue;
            int other = other_colour(found, suit);
            if (s->f2c) {
                if (other < n || found[3 - suit] < n - 1) continue;
            } else if (n >= 2 && other < n) {
                continue;
            }
            int c = suit * 13 + n;
            int src = s->where[c];
            if (src < 0) {
                if (s->park) {
                    int i = deck_index(s, c);
                    if (i >= 0) {
                        if (add_step(s, step_deck(s, i, -1, 0), to_start) < 0) return -1;
                        again = true;
                    }
                }
                continue;
            }
            if (s->cols[src][s->ncol[src] - 1] == c) {
                if (add_step(s, step_home(s, src), to_start) < 0) return -1;
                again = true;
                continue;
            }
            int twin = TWIN[c];
            int s2 = s->where[twin];
            if (s2 < 0 || s->cols[s2][s->ncol[s2] - 1] != twin) continue;
            int i = col_index(s, src, c);
            if (i < s->down[src]) continue;
            if (add_step(s, step_move(s, src, s2, s->ncol[src] - 1 - i), to_start) < 0) return -1;
            if (add_step(s, step_home(s, src), to_start) < 0) return -1;
            again = true;
        }
    }
    return 0;
}

/* ---- move generation (search.py's moves) ---- */

static bool child_available(const SearchState *s, int c) {
    for (int k = 0; k < NHOLDS[c]; k++) {
        int y = HOLDS[c][k];
        int src = s->where[y];
        if (src >= 0) {
            int i = col_index(s, src, y);
            if (i == s->down[src]) return true;
            if (i > s->down[src]) {
                int t = TWIN[c];
                if (s->found[SUIT[t]] == RANK[t] - 1) return true;
            }
        } else if (deck_index(s, y) >= 0 || (s->found[SUIT[y]] == RANK[y] && s->f2c)) {
            return true;
        }
    }
    return false;
}

typedef struct {
    int h;
    Move m;
} Reveal;

/* search.py's _by_down: a stable sort by face-down cards, most first */
static void by_down(Reveal *reveal, int *n, int h, Move m) {
    int i = *n;
    while (i && reveal[i - 1].h < h) {
        reveal[i] = reveal[i - 1];
        i--;
    }
    reveal[i] = (Reveal){h, m};
    (*n)++;
}

static inline bool in_children(int c, const int *children, int nchildren) {
    for (int k = 0; k < nchildren; k++) {
        if (children[k] == c) return true;
    }
    return false;
}

/* the moves of the position into out (at most MAXMOVES); their count */
static int gen_moves(SearchState *s, Move *out) {
    int target[52];
    int empty = -1;
    for (int c = 0; c < 52; c++) target[c] = -1;
    for (int d = 0; d < 7; d++) {
        if (s->ncol[d]) {
            int top = s->cols[d][s->ncol[d] - 1];
            if (NHOLDS[top] && target[HOLDS[top][0]] < 0) {
                target[HOLDS[top][0]] = d;
                target[HOLDS[top][1]] = d;
            }
        } else if (empty < 0) {
            empty = d;
        }
    }
    Move homes[8], others[MAXMOVES], deckm[MAXMOVES];
    Reveal reveal[8];
    int nhomes = 0, nothers = 0, ndeckm = 0, nreveal = 0;
    int ob = s->ob;
    const int *only = NULL;
    int nonly = 0;
    if (ob >= 0 && ob < EMPTY_OB) {
        only = HOLDS[ob];
        nonly = NHOLDS[ob];
    }
    bool to_empty = ob == EMPTY_OB;
    const int *found = s->found;
    for (int suit = 0; suit < (to_empty ? 0 : 4); suit++) {
        int n = found[suit];
        if (n < 13) {
            int c = suit * 13 + n;
            int src = s->where[c];
            if (src < 0) continue;
            if (s->cols[src][s->ncol[src] - 1] == c) {
                if (only == NULL) homes[nhomes++] = (Move){HOME, (int8_t)src, 0, 0};
                continue;
            }
            int twin = TWIN[c];
            int s2 = s->where[twin];
            if (s2 >= 0 && s->cols[s2][s->ncol[s2] - 1] == twin) {
                int i = col_index(s, src, c);
                if (i >= s->down[src]) {
                    homes[nhomes++] =
                        (Move){SWAP_HOME, (int8_t)src, (int8_t)s2, (int8_t)(s->ncol[src] - 1 - i)};
                }
            }
        }
    }
    for (int src = 0; src < 7; src++) {
        int len = s->ncol[src];
        if (!len) continue;
        int h = s->down[src];
        int c = s->cols[src][h];
        if (only != NULL && !in_children(c, only, nonly)) continue;
        int d = target[c];
        if (d >= 0) {
            if (to_empty) {
                /* onto a card, not into the empty column */
            } else if (h) {
                by_down(reveal, &nreveal, h, (Move){MOVE, (int8_t)src, (int8_t)d, (int8_t)(len - h)});
            } else {
                others[nothers++] = (Move){MOVE, (int8_t)src, (int8_t)d, (int8_t)len};
            }
        } else if (h && empty >= 0 && (s->any_empty || RANK[c] == KING)) {
            by_down(reveal, &nreveal, h, (Move){MOVE, (int8_t)src, (int8_t)empty, (int8_t)(len - h)});
        }
        if (s->any_empty && empty >= 0) {
            for (int i = h + 1; i < len; i++) {
                others[nothers++] = (Move){MOVE, (int8_t)src, (int8_t)empty, (int8_t)(len - i)};
            }
        }
    }
    if (s->park) {
        int dpos[52];
        for (int c = 0; c < 52; c++) dpos[c] = -1;
        for (int i = 0; i < s->ndeck; i++) dpos[s->deck[i]] = i;
        if (only == NULL && !to_empty) {
            for (int suit = 0; suit < 4; suit++) {
                int c = suit * 13 + found[suit];
                if (found[suit] < 13 && dpos[c] >= 0) deckm[ndeckm++] = (Move){DECK, (int8_t)dpos[c], -1, 0};
            }
        }
        for (int d = 0; d < (to_empty ? 0 : 7); d++) {
            if (!s->ncol[d]) continue;
            int top = s->cols[d][s->ncol[d] - 1];
            if (!NHOLDS[top] || target[HOLDS[top][0]] != d) continue;
            for (int k = 0; k < NHOLDS[top]; k++) {
                int c = HOLDS[top][k];
                if (dpos[c] >= 0 && (only == NULL || in_children(c, only, nonly)) &&
                    (!s->prune || child_available(s, c))) {
                    deckm[ndeckm++] = (Move){DECK, (int8_t)dpos[c], (int8_t)d, 0};
                }
            }
        }
        if (empty >= 0) {
            int candidates[52], ncand = 0;
            if (only != NULL) {
                if (s->any_empty) {
                    for (int k = 0; k < nonly; k++) candidates[ncand++] = only[k];
                }
            } else if (s->any_empty) {
                for (int c = 0; c < 52; c++) candidates[ncand++] = c;
            } else {
                for (int k = 0; k < 4; k++) candidates[ncand++] = KINGS[k];
            }
            for (int k = 0; k < ncand; k++) {
                int c = candidates[k];
                if (dpos[c] >= 0 && target[c] < 0 && (!s->prune || child_available(s, c))) {
                    deckm[ndeckm++] = (Move){DECK, (int8_t)dpos[c], (int8_t)empty, 0};
                }
            }
        }
    } else if (s->ndeck) {
        /* search.py's _deck_moves over _reachable (_reach) */
        int n = s->ndeck, p = s->p, k = s->draw;
        bool can_recycle = s->allowed < 0 || s->rec < s->allowed;
        int reach[2 * MAXDECK + 2][2], nreach = 0;
        if (k == 1 && can_recycle) {
            for (int i = 0; i < n; i++) {
                reach[nreach][0] = i;
                reach[nreach++][1] = i >= p - 1 ? 0 : 1;
            }
        } else {
            bool seen[MAXDECK] = {false};
            if (p > 0) {
                reach[nreach][0] = p - 1;
                reach[nreach++][1] = 0;
                seen[p - 1] = true;
            }
            int q = p;
            while (q < n) {
                q = q + k < n ? q + k : n;
                reach[nreach][0] = q - 1;
                reach[nreach++][1] = 0;
                seen[q - 1] = true;
            }
            if (can_recycle) {
                q = 0;
                while (q < n) {
                    q = q + k < n ? q + k : n;
                    if (!seen[q - 1]) {
                        reach[nreach][0] = q - 1;
                        reach[nreach++][1] = 1;
                    }
                }
            }
        }
        for (int j = 0; j < nreach; j++) {
            int i = reach[j][0], r = reach[j][1];
            int c = s->deck[i];
            if (found[SUIT[c]] == RANK[c] - 1) deckm[ndeckm++] = (Move){DECK, (int8_t)i, -1, (int8_t)r};
            int d = target[c];
            if (d >= 0) {
                deckm[ndeckm++] = (Move){DECK, (int8_t)i, (int8_t)d, (int8_t)r};
            } else if (empty >= 0 && (s->any_empty || RANK[c] == KING)) {
                deckm[ndeckm++] = (Move){DECK, (int8_t)i, (int8_t)empty, (int8_t)r};
            }
        }
    }
    if (s->f2c) {
        for (int suit = 0; suit < 4; suit++) {
            int n = found[suit];
            if (!n) continue;
            int c = suit * 13 + n - 1;
            if (only != NULL && !in_children(c, only, nonly)) continue;
            int d = target[c];
            if (to_empty && d >= 0) continue;
            if (d < 0) {
                if (empty < 0 || !(s->any_empty || n == KING)) continue;
                d = empty;
            }
            if (other_colour(found, suit) >= n - 1 && found[3 - suit] >= n - 2) continue;
            others[nothers++] = (Move){FOUND, (int8_t)suit, (int8_t)d, 0};
        }
    }
    Move all[MAXMOVES];
    int nall = 0;
    Move shuffled[8];
    for (int i = 0; i < nreveal; i++) shuffled[i] = reveal[i].m;
#define PUT(list, count)                                           \
    do {                                                           \
        for (int _i = 0; _i < (count); _i++) all[nall++] = (list)[_i]; \
    } while (0)
    PUT(homes, nhomes);
    if (s->has_rng) {
        shuffle_moves(&s->rng, shuffled, nreveal);
        shuffle_moves(&s->rng, deckm, ndeckm);
        if (mt_random(&s->rng) < 0.5) {
            PUT(shuffled, nreveal);
            PUT(deckm, ndeckm);
        } else {
            PUT(deckm, ndeckm);
            PUT(shuffled, nreveal);
        }
    } else if (s->deck_first) {
        PUT(deckm, ndeckm);
        PUT(shuffled, nreveal);
    } else {
        PUT(shuffled, nreveal);
        PUT(deckm, ndeckm);
    }
    PUT(others, nothers);
#undef PUT
    int nout = 0;
    if (ob >= 0) {
        if (ob == EMPTY_OB) {
            for (int i = 0; i < nall; i++) {
                Move m = all[i];
                if ((m.kind == MOVE || m.kind == DECK || m.kind == FOUND) && m.b >= 0 && !s->ncol[m.b]) {
                    out[nout++] = m;
                }
            }
            return nout;
        }
        /* search.py's _uses: the moves that put one of ob's children on a column */
        const int *children = HOLDS[ob];
        int nchildren = NHOLDS[ob];
        for (int i = 0; i < nall; i++) {
            Move m = all[i];
            bool keep = false;
            if (m.kind == MOVE) {
                keep = in_children(s->cols[m.a][s->ncol[m.a] - m.c], children, nchildren) && s->ncol[m.b];
            } else if (m.kind == SWAP_HOME) {
                keep = in_children(s->cols[m.a][s->ncol[m.a] - m.c], children, nchildren);
            } else if (m.kind == DECK) {
                keep = m.b >= 0 && in_children(s->deck[m.a], children, nchildren);
            } else if (m.kind == FOUND) {
                keep = in_children(m.a * 13 + s->found[m.a] - 1, children, nchildren);
            }
            if (keep) out[nout++] = m;
        }
        return nout;
    }
    memcpy(out, all, (size_t)nall * sizeof(Move));
    return nall;
}

/* ---- make / unmake (search.py's do and undo): a move's Done ---- */
static int do_move(SearchState *s, Move m, Done *done) {
    done->start = s->nsteps;
    done->ob = s->ob;
    int kind = m.kind;
    bool emptied = false;
    if (kind == MOVE) {
        if (push_step(s, step_move(s, m.a, m.b, m.c)) < 0) return -1;
        emptied = !s->ncol[m.a];
    } else if (kind == HOME) {
        if (push_step(s, step_home(s, m.a)) < 0) return -1;
    } else if (kind == SWAP_HOME) {
        if (push_step(s, step_move(s, m.a, m.b, m.c)) < 0) return -1;
        if (push_step(s, step_home(s, m.a)) < 0) return -1;
    } else if (kind == DECK) {
        if (push_step(s, step_deck(s, m.a, m.b, m.c)) < 0) return -1;
    } else {
        if (push_step(s, step_f2c(s, m.a, m.b)) < 0) return -1;
    }
    done->own = s->nsteps - done->start;
    s->ob = -1;
    if (kind == DECK && s->park && m.b >= 0) {
        s->ob = s->steps[done->start].a;
    } else if (kind == MOVE && emptied && s->ncol[m.b] && s->ncol[m.b] > m.c) {
        s->ob = EMPTY_OB;
    }
    if (kind == MOVE || (kind == DECK && m.b >= 0)) {
        int col = kind == MOVE ? m.a : m.b;
        if (s->ncol[col]) {
            int x = s->cols[col][s->ncol[col] - 1];
            int r = RANK[x] - 1;
            if (s->found[SUIT[x]] == r || s->found[3 - SUIT[x]] == r) {
                if (autos(s, false) < 0) return -1;
            }
        }
    } else if (autos(s, false) < 0) {
        return -1;
    }
    done->end = s->nsteps;
    if ((done->end - done->start > 1 || !s->prune) && s->ob >= 0) s->ob = -1;
    return 0;
}

static void undo_move(SearchState *s, const Done *done) {
    for (int i = done->end - 1; i >= done->start; i--) undo_step(s, &s->steps[i]);
    s->nsteps = done->start;
    s->ob = done->ob;
}

/* ---- pointer dominance (search.py's _dominated and _mark) ---- */
static uint64_t dominated(SearchState *s, uint8_t *key, int ob) {
    int q = key[KEYLEN - 1], k = s->draw, low;
    if (s->cycle) {
        if (!q) return NO_NODE;
        low = 1;
    } else {
        low = 0;
    }
    int p = q - k;
    if (p < low) return NO_NODE;
    uint64_t found = NO_NODE;
    for (int tries = 0; p >= low && tries < 8; p -= k, tries++) {
        key[KEYLEN - 1] = (uint8_t)p;
        long e = table_find(&s->seen, key, hash_key(key));
        if (e >= 0) {
            uint64_t old = *entry_obs(&s->seen, e);
            if (old & OB_NONE) {
                found = node_of(e, -1);
                break;
            }
            if (ob >= 0 && (old & ob_bit(ob))) {
                found = node_of(e, ob);
                break;
            }
        }
    }
    key[KEYLEN - 1] = (uint8_t)q;
    return found;
}

/* NO_NODE when already covered; else the node; -2 as a node when memory ran out */
static uint64_t mark(SearchState *s, const uint8_t *key, int ob) {
    long e = table_add(&s->seen, key, hash_key(key));
    if (e < 0) {
        s->oom = true;
        return NO_NODE - 1;
    }
    uint64_t old = *entry_obs(&s->seen, e);
    if (old && covers(old, ob)) return NO_NODE;
    *entry_obs(&s->seen, e) = old | ob_bit(ob);
    return node_of(e, ob);
}

/* ---- a proof of loss from the face-down cards alone (search.py's _deadlocked) ---- */
static bool deadlocked(const SearchState *s) {
    if (s->any_empty) return false;
    int pos_s[52], pos_i[52];
    uint64_t inpos = 0, members = 0;
    for (int src = 0; src < 7; src++) {
        int d = s->down[src];
        if (!d) continue;
        for (int i = 0; i <= d; i++) {
            int c = s->cols[src][i];
            pos_s[c] = src;
            pos_i[c] = i;
            inpos |= 1ULL << c;
            if (RANK[c] != KING) members |= 1ULL << c;
        }
    }
    bool changed = true;
    while (changed && members) {
        changed = false;
        int top[7] = {-1, -1, -1, -1, -1, -1, -1};
        for (int c = 0; c < 52; c++) {
            if ((members >> c & 1) && pos_i[c] > top[pos_s[c]]) top[pos_s[c]] = pos_i[c];
        }
        uint64_t locked = 0;
        for (int c = 0; c < 52; c++) {
            if ((inpos >> c & 1) && pos_i[c] < top[pos_s[c]]) locked |= 1ULL << c;
        }
        if (!s->f2c) {
            for (int suit = 0; suit < 4; suit++) {
                for (int r = 0; r < s->found[suit]; r++) locked |= 1ULL << (suit * 13 + r);
            }
        }
        for (int c = 0; c < 52; c++) {
            if (!(members >> c & 1)) continue;
            int suit = SUIT[c];
            bool below = false;
            for (int r = s->found[suit]; r < RANK[c] - 1; r++) {
                if (locked >> (suit * 13 + r) & 1) {
                    below = true;
                    break;
                }
            }
            bool parents = true;
            for (int k = 0; k < NPARENTS[c]; k++) {
                if (!(locked >> PARENTS[c][k] & 1)) parents = false;
            }
            if (below && parents) continue;
            members &= ~(1ULL << c);
            changed = true;
        }
    }
    return members != 0;
}

static bool won_position(const SearchState *s) {
    for (int i = 0; i < 7; i++) {
        if (s->down[i]) return false;
    }
    return !s->ndeck || (s->draw == 1 && s->allowed < 0);
}

static int push_frame(SearchState *s, int64_t number, int64_t top, int64_t states) {
    GROW(s->frames, s->nframes, s->capframes, 1);
    GROW(s->movebuf, s->nmovebuf, s->capmovebuf, MAXMOVES);
    Frame *f = &s->frames[s->nframes++];
    f->moves = s->nmovebuf;
    f->nmoves = gen_moves(s, s->movebuf + s->nmovebuf);
    s->nmovebuf += f->nmoves;
    f->next = 0;
    f->number = f->low = number;
    f->top = top;
    f->states = states;
    f->test = TEST_AFTER;
    return 0;
}

static void pop_frame(SearchState *s) {
    s->nframes--;
    s->nmovebuf = s->frames[s->nframes].moves;
}

static int tpush(SearchState *s, uint64_t node) {
    if (s->ntstack >= s->captstack) {
        int64_t cap = s->captstack ? s->captstack * 2 : 1024;
        uint64_t *p = realloc(s->tstack, (size_t)cap * sizeof(uint64_t));
        if (!p) {
            s->oom = true;
            return -1;
        }
        s->tstack = p;
        s->captstack = cap;
    }
    s->tstack[s->ntstack++] = node;
    return 0;
}

static int add_to(SearchState *s, KeyTable *t, const uint8_t *k) {
    if (table_add(t, k, hash_key(k)) < 0) {
        s->oom = true;
        return -1;
    }
    return 0;
}

static int push_done(SearchState *s, Done d) {
    GROW(s->path, s->npath, s->cappath, 1);
    s->path[s->npath++] = d;
    return 0;
}

/* search.py's unwind: the key of every position of the line into won, undoing it */
static int unwind(SearchState *s, KeyTable *won) {
    uint8_t key[KEYLEN];
    while (s->npath) {
        make_key(s, key);
        if (add_to(s, won, key) < 0) return -1;
        undo_move(s, &s->path[--s->npath]);
    }
    make_key(s, key);
    return add_to(s, won, key);
}

static int advance(SearchState *s, int64_t count);

/* search.py's _relaxed_lost: 1 lost in Draw 1 with unlimited passes, 0 not shown, -1 out
 * of memory */
static int relaxed_lost(SearchState *s, const uint8_t *rk, int64_t budget) {
    if (table_has(s->relax_won, rk)) return 0;
    SearchState *sub = calloc(1, sizeof *sub);
    if (!sub || state_init(sub) < 0) {
        if (sub) state_free(sub);
        free(sub);
        s->oom = true;
        return -1;
    }
    memcpy(sub->cols, s->cols, sizeof s->cols);
    memcpy(sub->ncol, s->ncol, sizeof s->ncol);
    memcpy(sub->down, s->down, sizeof s->down);
    memcpy(sub->found, s->found, sizeof s->found);
    memcpy(sub->deck, s->deck, sizeof s->deck);
    memcpy(sub->where, s->where, sizeof s->where);
    memcpy(sub->root_bit, s->root_bit, sizeof s->root_bit);
    sub->ndeck = s->ndeck;
    sub->p = 0;
    sub->rec = 0;
    sub->draw = 1;
    sub->allowed = -1;
    sub->any_empty = s->any_empty;
    sub->f2c = s->f2c;
    sub->prune = true;
    sub->park = true;
    sub->use_p = false;
    sub->use_rec = false;
    sub->cycle = false;
    sub->deadlock_test = false;
    sub->tests = true;
    sub->ob = -1;
    sub->lost = s->relax_lost;
    sub->known_won = s->relax_won;
    int result = advance(sub, budget);
    s->relaxed_states += sub->states;
    int answer = 0;
    if (result == -2 || sub->oom) {
        s->oom = true;
        answer = -1;
    } else if (result == 1) {
        if (add_to(s, s->relax_won, rk) < 0 || unwind(sub, s->relax_won) < 0) answer = -1;
    } else if (result == 0) {
        answer = add_to(s, s->relax_lost, rk) < 0 ? -1 : 1;
    }
    state_free(sub);
    free(sub);
    return answer;
}

/* search.py's advance: 1 won, 0 proven lost, -1 not decided yet, -2 out of memory */
static int advance(SearchState *s, int64_t count) {
    uint8_t key[KEYLEN], rk[KEYLEN];
    KeyTable *lost = s->lost;
    if (!s->started) {
        if (autos(s, true) < 0) return -2;
        if (won_position(s)) return 1;
        if (s->deadlock_test && deadlocked(s)) return 0;
        make_key(s, key);
        if (table_has(lost, key)) return 0;
        long e = table_add(&s->seen, key, hash_key(key));
        if (e < 0) return -2;
        *entry_obs(&s->seen, e) = OB_NONE;
        *entry_number(&s->seen, e) = 0;
        if (tpush(s, node_of(e, -1)) < 0) return -2;
        if (push_frame(s, 0, 0, 0) < 0) return -2;
        s->started = true;
    }
    int64_t states = s->states, limit = states + count, visits = s->visits;
    bool use_p = s->use_p && s->prune, cycle = s->cycle && s->prune;
    bool deck_wins = s->draw == 1 && s->allowed < 0;
    bool tester = s->relax_lost != NULL && s->tests;
    int result = 0;
    while (s->nframes) {
        if (states >= limit) {
            result = -1;
            goto out;
        }
        Frame *frame = &s->frames[s->nframes - 1];
        int i = frame->next;
        if (i == frame->nmoves) {
            int64_t low = frame->low, number = frame->number, top = frame->top;
            pop_frame(s);
            if (low == number) {
                /* the root of a complete component: it and everything above it on tstack
                 * are lost */
                for (int64_t j = top; j < s->ntstack; j++) {
                    uint64_t node = s->tstack[j];
                    node_remove(&s->seen, &s->idx, node);
                    if (node_ob(node) == -1) {
                        if (add_to(s, lost, entry_at(&s->seen, node_entry(node))) < 0) {
                            result = -2;
                            goto out;
                        }
                    }
                }
                s->ntstack = top;
            } else if (s->nframes && low < s->frames[s->nframes - 1].low) {
                s->frames[s->nframes - 1].low = low;
            }
            if (s->npath) undo_move(s, &s->path[--s->npath]);
            continue;
        }
        int64_t cost = states - frame->states;
        if (tester && cost >= frame->test && s->fails <= FREE_FAILS + FAILS_PER_CUT * s->cuts) {
            int64_t before = s->relaxed_states;
            make_key(s, key);
            relaxed_key(key, rk);
            int64_t budget = TEST_RATIO * cost < TEST_MAX ? TEST_RATIO * cost : TEST_MAX;
            int cut = table_has(s->relax_lost, rk) ? 1 : relaxed_lost(s, rk, budget);
            if (cut < 0) {
                result = -2;
                goto out;
            }
            frame = &s->frames[s->nframes - 1];
            if (cut) {
                s->cuts++;
                int64_t top = frame->top;
                pop_frame(s);
                for (int64_t j = top; j < s->ntstack; j++) {
                    uint64_t node = s->tstack[j];
                    node_remove(&s->seen, &s->idx, node);
                    if (add_to(s, lost, entry_at(&s->seen, node_entry(node))) < 0) {
                        result = -2;
                        goto out;
                    }
                }
                s->ntstack = top;
                limit -= s->relaxed_states - before;
                if (s->npath) undo_move(s, &s->path[--s->npath]);
                continue;
            }
            limit -= s->relaxed_states - before;
            frame->test *= TEST_GROWTH;
            s->fails++;
        }
        frame->next = i + 1;
        Done done;
        if (do_move(s, s->movebuf[frame->moves + i], &done) < 0) {
            result = -2;
            goto out;
        }
        states++;
        make_key(s, key);
        uint64_t h = hash_key(key);

        long e = table_find(&s->seen, key, h);
        uint64_t old = e >= 0 ? *entry_obs(&s->seen, e) : 0;
        int ob = s->ob;
        if (e >= 0 && covers(old, ob)) {
            int64_t j = node_number(&s->seen, &s->idx, node_of(e, ob == -1 || covers(old, -1) ? -1 : ob));
            if (j >= 0 && j < frame->low) frame->low = j;
            undo_move(s, &done);
            continue;
        }
        if (lost->n && table_find(lost, key, h) >= 0) {
            undo_move(s, &done);
            continue;
        }
        if (use_p) {
            uint64_t dom = dominated(s, key, ob);
            if (dom != NO_NODE) {
                int64_t j = node_number(&s->seen, &s->idx, dom);
                if (j >= 0 && j < frame->low) frame->low = j;
                undo_move(s, &done);
                continue;
            }
        }
        if (s->relax_lost != NULL) {
            relaxed_key(key, rk);
            if (table_has(s->relax_lost, rk)) {
                if (add_to(s, lost, key) < 0) {
                    result = -2;
                    goto out;
                }
                undo_move(s, &done);
                continue;
            }
        }
        if (e < 0) {
            e = table_insert(&s->seen, key, h);
            if (e < 0) {
                result = -2;
                goto out;
            }
        }
        *entry_obs(&s->seen, e) |= ob_bit(ob);
        visits++;
        int64_t number = visits;
        uint64_t node = node_of(e, ob);
        int64_t top = s->ntstack;
        if (node_set(&s->seen, &s->idx, node, number) < 0 || tpush(s, node) < 0) {
            result = -2;
            goto out;
        }
        if (cycle && key[KEYLEN - 1]) {
            uint8_t q = key[KEYLEN - 1];
            key[KEYLEN - 1] = 0;
            uint64_t marked = mark(s, key, ob);
            key[KEYLEN - 1] = q;
            if (marked == NO_NODE - 1) {
                result = -2;
                goto out;
            }
            if (marked != NO_NODE) {
                if (node_set(&s->seen, &s->idx, marked, number) < 0 || tpush(s, marked) < 0) {
                    result = -2;
                    goto out;
                }
            }
        }
        if (push_done(s, done) < 0) {
            result = -2;
            goto out;
        }
        bool no_down = true;
        for (int c = 0; c < 7; c++) {
            if (s->down[c]) {
                no_down = false;
                break;
            }
        }
        if ((no_down && (!s->ndeck || deck_wins)) ||
            (s->known_won != NULL && s->known_won->n && table_find(s->known_won, key, h) >= 0)) {
            result = 1;
            goto out;
        }
        if (push_frame(s, number, top, states) < 0) {
            result = -2;
            goto out;
        }
    }
out:
    s->states = states;
    s->visits = visits;
    if (s->oom) return -2;
    return result;
}

/* ---- Python objects ------------------------------------------------------------------ */

/* KeySet: a set of keys (bytes) shared by searches: search.py's set[bytes] */
typedef struct {
    PyObject_HEAD
    KeyTable t;
} KeySetObject;

static PyTypeObject KeySetType;

static PyObject *keyset_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    if (!_PyArg_NoPositional("KeySet", args) || !_PyArg_NoKeywords("KeySet", kwds)) return NULL;
    KeySetObject *self = (KeySetObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    if (table_init(&self->t, 64, KEYLEN) < 0) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    return (PyObject *)self;
}

static void keyset_dealloc(KeySetObject *self) {
    table_free(&self->t);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* a key from Python: 16 bytes (Search.key's) */
static const uint8_t *key_arg(PyObject *key) {
    if (!PyBytes_Check(key) || PyBytes_GET_SIZE(key) != KEYLEN) {
        PyErr_SetString(PyExc_ValueError, "a key is 16 bytes (Search.key())");
        return NULL;
    }
    return (const uint8_t *)PyBytes_AS_STRING(key);
}

static int keyset_contains(KeySetObject *self, PyObject *key) {
    if (!PyBytes_Check(key) || PyBytes_GET_SIZE(key) != KEYLEN) return 0;
    return table_has(&self->t, (const uint8_t *)PyBytes_AS_STRING(key));
}

static Py_ssize_t keyset_len(KeySetObject *self) { return (Py_ssize_t)self->t.n; }

static PyObject *keyset_add(KeySetObject *self, PyObject *key) {
    const uint8_t *k = key_arg(key);
    if (!k) return NULL;
    if (table_add(&self->t, k, hash_key(k)) < 0) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PySequenceMethods keyset_as_sequence = {
    .sq_length = (lenfunc)keyset_len,
    .sq_contains = (objobjproc)keyset_contains,
};

static PyMethodDef keyset_methods[] = {
    {"add", (PyCFunction)keyset_add, METH_O, "Add a key."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject KeySetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "klondike_race.solver._csearch.KeySet",
    .tp_doc = "A set of position keys (bytes) that searches share: add, in, len.",
    .tp_basicsize = sizeof(KeySetObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = keyset_new,
    .tp_dealloc = (destructor)keyset_dealloc,
    .tp_as_sequence = &keyset_as_sequence,
    .tp_methods = keyset_methods,
};

static KeySetObject *new_keyset(void) {
    PyObject *none = PyTuple_New(0);
    if (!none) return NULL;
    PyObject *made = keyset_new(&KeySetType, none, NULL);
    Py_DECREF(none);
    return (KeySetObject *)made;
}

/* Relaxation: search.py's Relaxation (lost and won, two KeySets) */
typedef struct {
    PyObject_HEAD
    KeySetObject *lost, *won;
} RelaxationObject;

static PyObject *relaxation_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    if (!_PyArg_NoPositional("Relaxation", args) || !_PyArg_NoKeywords("Relaxation", kwds)) return NULL;
    RelaxationObject *self = (RelaxationObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->lost = new_keyset();
    self->won = new_keyset();
    if (!self->lost || !self->won) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static void relaxation_dealloc(RelaxationObject *self) {
    Py_XDECREF(self->lost);
    Py_XDECREF(self->won);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef relaxation_members[] = {
    {"lost", T_OBJECT, offsetof(RelaxationObject, lost), READONLY, "Draw 1 keys proven lost"},
    {"won", T_OBJECT, offsetof(RelaxationObject, won), READONLY, "Draw 1 keys known won"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject RelaxationType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "klondike_race.solver._csearch.Relaxation",
    .tp_doc = "What the Draw 1 relaxation tests share (search.py's Relaxation).",
    .tp_basicsize = sizeof(RelaxationObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = relaxation_new,
    .tp_dealloc = (destructor)relaxation_dealloc,
    .tp_members = relaxation_members,
};

/* Search: search.py's Search (advance, unwind, key, path, start_steps, the counts; no
 * max_states and no run: solve budgets the searches itself) */
typedef struct {
    PyObject_HEAD
    SearchState *s;
    KeySetObject *lost;
    RelaxationObject *relaxation;
    KeySetObject *won;
} SearchObject;

static int int_list(PyObject *seq, const char *what, int *out, int max, int low, int high) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > max) {
        PyErr_Format(PyExc_ValueError, "%s: at most %d items", what, max);
        Py_DECREF(fast);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        if (v < low || v > high) {
            PyErr_Format(PyExc_ValueError, "%s: %ld is out of range", what, v);
            Py_DECREF(fast);
            return -1;
        }
        out[i] = (int)v;
    }
    Py_DECREF(fast);
    return (int)n;
}

static PyObject *search_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {
        "columns", "down", "found", "deck", "turned", "recycles", "draw", "recycles_allowed",
        "any_empty", "foundation_to_column", "deck_first", "lost", "relaxation",
        "deadlock_test", "tests", "shuffle", "won", "prune", NULL,
    };
    PyObject *columns, *down, *found, *deck, *allowed = Py_None;
    PyObject *lost = Py_None, *relaxation = Py_None, *shuffle = Py_None, *won = Py_None;
    int turned, recycles, draw = 0, any_empty = 0, f2c = 0, deck_first = 0, deadlock_test = 1;
    int tests = 1, prune = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOii|$iOpppOOppOOp", kwlist, &columns, &down,
                                     &found, &deck, &turned, &recycles, &draw, &allowed, &any_empty,
                                     &f2c, &deck_first, &lost, &relaxation,
                                     &deadlock_test, &tests, &shuffle, &won, &prune)) {
        return NULL;
    }
    if (draw < 1 || draw > MAXDECK) {
        PyErr_SetString(PyExc_ValueError, "draw: 1 to 24 cards");
        return NULL;
    }
    if ((lost != Py_None && !PyObject_TypeCheck(lost, &KeySetType)) ||
        (won != Py_None && !PyObject_TypeCheck(won, &KeySetType)) ||
        (relaxation != Py_None && !PyObject_TypeCheck(relaxation, &RelaxationType))) {
        PyErr_SetString(PyExc_TypeError, "lost and won are KeySets, relaxation a Relaxation");
        return NULL;
    }
    SearchObject *self = (SearchObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    SearchState *s = self->s = calloc(1, sizeof(SearchState));
    if (!s || state_init(s) < 0) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    int vals[MAXCOL];
    int n = int_list(down, "down", s->down, 7, 0, 6);
    if (n < 0) goto fail;
    if (n != 7) {
        PyErr_SetString(PyExc_ValueError, "down: 7 counts");
        goto fail;
    }
    if (int_list(found, "found", s->found, 4, 0, 13) != 4) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "found: 4 counts");
        goto fail;
    }
    int ndeck = int_list(deck, "deck", vals, MAXDECK, 0, 51);
    if (ndeck < 0) goto fail;
    s->ndeck = ndeck;
    memset(s->root_bit, -1, sizeof s->root_bit);
    for (int i = 0; i < ndeck; i++) {
        if (s->root_bit[vals[i]] >= 0 || RANK[vals[i]] <= s->found[SUIT[vals[i]]]) {
            PyErr_SetString(PyExc_ValueError, "deck: a card twice (or home)");
            goto fail;
        }
        s->deck[i] = (int8_t)vals[i];
        s->root_bit[vals[i]] = (int8_t)i;
    }
    for (int c = 0; c < 52; c++) s->where[c] = -1;
    PyObject *cols = PySequence_Fast(columns, "columns");
    if (!cols) goto fail;
    if (PySequence_Fast_GET_SIZE(cols) != 7) {
        Py_DECREF(cols);
        PyErr_SetString(PyExc_ValueError, "columns: 7 columns");
        goto fail;
    }
    for (int i = 0; i < 7; i++) {
        int len = int_list(PySequence_Fast_GET_ITEM(cols, i), "column", vals, MAXCOL - 1, 0, 51);
        if (len < 0) {
            Py_DECREF(cols);
            goto fail;
        }
        if (len ? s->down[i] >= len : s->down[i] != 0) {
            Py_DECREF(cols);
            PyErr_SetString(PyExc_ValueError, "down: a column has a face-up card or is empty");
            goto fail;
        }
        if (len - s->down[i] > 13) {
            Py_DECREF(cols);
            PyErr_SetString(PyExc_ValueError, "column: at most 13 face-up cards");
            goto fail;
        }
        s->ncol[i] = len;
        for (int j = 0; j < len; j++) {
            int c = vals[j];
            if (s->where[c] >= 0 || s->root_bit[c] >= 0 || RANK[c] <= s->found[SUIT[c]]) {
                Py_DECREF(cols);
                PyErr_SetString(PyExc_ValueError, "columns: a card twice (or in the deck, or home)");
                goto fail;
            }
            s->cols[i][j] = (int8_t)c;
            s->where[c] = (int8_t)i;
        }
    }
    Py_DECREF(cols);
    if (turned < 0 || turned > ndeck || recycles < 0) {
        PyErr_SetString(PyExc_ValueError, "turned: 0 to the deck's size; recycles: 0 or more");
        goto fail;
    }
    s->p = turned;
    s->draw = draw;
    if (allowed == Py_None) {
        s->allowed = -1;
    } else {
        long a = PyLong_AsLong(allowed);
        if (a == -1 && PyErr_Occurred()) goto fail;
        if (a < 0 || a > 7) {
            PyErr_SetString(PyExc_ValueError, "recycles_allowed: None or 0 to 7");
            goto fail;
        }
        s->allowed = (int)a;
        if (recycles > a) {
            PyErr_SetString(PyExc_ValueError, "recycles: more than recycles_allowed");
            goto fail;
        }
    }
    /* the recycles used matter only when they are limited (in the key, and to allow
     * one more): unlimited, they are counted from 0 (a step keeps them in a byte) */
    s->rec = s->allowed >= 0 ? recycles : 0;
    s->any_empty = any_empty;
    s->f2c = f2c;
    s->deck_first = deck_first;
    s->prune = prune;
    s->deadlock_test = deadlock_test;
    s->tests = tests;
    s->use_p = draw != 1 || s->allowed >= 0;
    s->use_rec = s->allowed >= 0;
    s->cycle = draw > 1 && s->allowed < 0;
    s->park = draw == 1 && s->allowed < 0;
    s->ob = -1;
    if (shuffle != Py_None) {
        unsigned long long seed = PyLong_AsUnsignedLongLong(shuffle);
        if (seed == (unsigned long long)-1 && PyErr_Occurred()) goto fail;
        s->has_rng = true;
        mt_seed(&s->rng, seed);
    }
    self->lost = lost == Py_None ? new_keyset() : (KeySetObject *)Py_NewRef(lost);
    if (!self->lost) goto fail;
    s->lost = &self->lost->t;
    if (relaxation != Py_None) {
        self->relaxation = (RelaxationObject *)Py_NewRef(relaxation);
        s->relax_lost = &self->relaxation->lost->t;
        s->relax_won = &self->relaxation->won->t;
    }
    if (won != Py_None) {
        self->won = (KeySetObject *)Py_NewRef(won);
        s->known_won = &self->won->t;
    }
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static void search_dealloc(SearchObject *self) {
    if (self->s) {
        state_free(self->s);
        free(self->s);
    }
    Py_XDECREF(self->lost);
    Py_XDECREF(self->relaxation);
    Py_XDECREF(self->won);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *search_advance(SearchObject *self, PyObject *arg) {
    long long count = PyLong_AsLongLong(arg);
    if (count == -1 && PyErr_Occurred()) return NULL;
    int result = advance(self->s, count);
    if (result == -2) return PyErr_NoMemory();
    if (result == -1) Py_RETURN_NONE;
    return PyBool_FromLong(result);
}

static PyObject *search_unwind(SearchObject *self, PyObject *won) {
    if (!PyObject_TypeCheck(won, &KeySetType)) {
        PyErr_SetString(PyExc_TypeError, "unwind takes a KeySet");
        return NULL;
    }
    if (unwind(self->s, &((KeySetObject *)won)->t) < 0) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *search_key(SearchObject *self, PyObject *Py_UNUSED(ignored)) {
    uint8_t key[KEYLEN];
    make_key(self->s, key);
    return PyBytes_FromStringAndSize((const char *)key, KEYLEN);
}

static PyObject *step_tuple(const Step *st) {
    switch (st->kind) {
    case 'm':
        return Py_BuildValue("(siiiO)", "m", st->a, st->b, st->c, st->flipped ? Py_True : Py_False);
    case 'h':
        return Py_BuildValue("(siiO)", "h", st->a, st->b, st->flipped ? Py_True : Py_False);
    case 'w':
        return Py_BuildValue("(siiiii)", "w", st->a, st->b, st->c, st->p, st->rec);
    default:
        return Py_BuildValue("(sii)", "f", st->a, st->b);
    }
}

static int append_steps(PyObject *list, const Step *steps, int n) {
    for (int i = 0; i < n; i++) {
        PyObject *t = step_tuple(&steps[i]);
        if (!t || PyList_Append(list, t) < 0) {
            Py_XDECREF(t);
            return -1;
        }
        Py_DECREF(t);
    }
    return 0;
}

/* search.py's path: a list per move of its steps, the obligation before it (an int)
 * after the move's own steps, then its safe cards home ('w' steps without the deck) */
static PyObject *search_path(SearchObject *self, void *Py_UNUSED(closure)) {
    SearchState *s = self->s;
    PyObject *path = PyList_New(0);
    if (!path) return NULL;
    for (int i = 0; i < s->npath; i++) {
        const Done *d = &s->path[i];
        PyObject *steps = PyList_New(0);
        PyObject *ob = steps ? PyLong_FromLong(d->ob) : NULL;
        if (!ob || append_steps(steps, s->steps + d->start, d->own) < 0 ||
            PyList_Append(steps, ob) < 0 ||
            append_steps(steps, s->steps + d->start + d->own, d->end - d->start - d->own) < 0 ||
            PyList_Append(path, steps) < 0) {
            Py_XDECREF(ob);
            Py_XDECREF(steps);
            Py_DECREF(path);
            return NULL;
        }
        Py_DECREF(ob);
        Py_DECREF(steps);
    }
    return path;
}

static PyObject *search_start_steps(SearchObject *self, void *Py_UNUSED(closure)) {
    PyObject *list = PyList_New(0);
    if (list && append_steps(list, self->s->start, self->s->nstart) < 0) Py_CLEAR(list);
    return list;
}

#define COUNT_GETTER(name)                                                           \
    static PyObject *search_##name(SearchObject *self, void *Py_UNUSED(closure)) {   \
        return PyLong_FromLongLong(self->s->name);                                   \
    }
COUNT_GETTER(states)
COUNT_GETTER(relaxed_states)
COUNT_GETTER(visits)
COUNT_GETTER(cuts)
COUNT_GETTER(fails)

static PyObject *search_relaxation(SearchObject *self, void *Py_UNUSED(closure)) {
    return Py_NewRef(self->relaxation ? (PyObject *)self->relaxation : Py_None);
}

static PyObject *search_lost(SearchObject *self, void *Py_UNUSED(closure)) {
    return Py_NewRef((PyObject *)self->lost);
}

static PyGetSetDef search_getset[] = {
    {"path", (getter)search_path, NULL, "the steps of each move of the line", NULL},
    {"start_steps", (getter)search_start_steps, NULL, "the steps played before the first move", NULL},
    {"states", (getter)search_states, NULL, "positions searched", NULL},
    {"relaxed_states", (getter)search_relaxed_states, NULL, "positions of the relaxation tests", NULL},
    {"visits", (getter)search_visits, NULL, "positions visited", NULL},
    {"cuts", (getter)search_cuts, NULL, "relaxation tests that proved a position lost", NULL},
    {"fails", (getter)search_fails, NULL, "relaxation tests that did not", NULL},
    {"relaxation", (getter)search_relaxation, NULL, "the Relaxation, or None", NULL},
    {"lost", (getter)search_lost, NULL, "the keys proven lost (a KeySet)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef search_methods[] = {
    {"advance", (PyCFunction)search_advance, METH_O,
     "Search on for at most count positions: True (won), False (lost) or None."},
    {"unwind", (PyCFunction)search_unwind, METH_O,
     "After a win: every position of the line into the KeySet, undoing the line."},
    {"key", (PyCFunction)search_key, METH_NOARGS, "The position's class key."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SearchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "klondike_race.solver._csearch.Search",
    .tp_doc = "One search from one position (search.py's Search, in C).",
    .tp_basicsize = sizeof(SearchObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = search_new,
    .tp_dealloc = (destructor)search_dealloc,
    .tp_methods = search_methods,
    .tp_getset = search_getset,
};

/* _shuffled(seed, size): (random.Random(seed) then shuffle(list(range(size))), the next
 * random()), as this module's twister gives them (tests/solver/test_native.py) */
static PyObject *shuffled(PyObject *Py_UNUSED(module), PyObject *args) {
    unsigned long long seed;
    int size;
    if (!PyArg_ParseTuple(args, "Ki", &seed, &size)) return NULL;
    if (size < 0 || size > MAXMOVES) {
        PyErr_SetString(PyExc_ValueError, "size: 0 to 512");
        return NULL;
    }
    Twister r;
    mt_seed(&r, seed);
    Move items[MAXMOVES];
    for (int i = 0; i < size; i++) items[i] = (Move){0, (int8_t)(i & 127), (int8_t)(i >> 7), 0};
    shuffle_moves(&r, items, size);
    PyObject *list = PyList_New(size);
    if (!list) return NULL;
    for (int i = 0; i < size; i++) PyList_SET_ITEM(list, i, PyLong_FromLong(items[i].a + 128 * items[i].b));
    return Py_BuildValue("(Nd)", list, mt_random(&r));
}

static PyObject *key_set(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored)) {
    return (PyObject *)new_keyset();
}

static PyMethodDef module_methods[] = {
    {"_shuffled", shuffled, METH_VARARGS, "The restarts' shuffle, for the tests."},
    {"key_set", key_set, METH_NOARGS, "An empty KeySet."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_csearch",
    "The solver's compiled core: search.py's Search in C (csearch.c).", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__csearch(void) {
    init_cards();
    if (PyType_Ready(&KeySetType) < 0 || PyType_Ready(&RelaxationType) < 0 ||
        PyType_Ready(&SearchType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (PyModule_AddObjectRef(m, "KeySet", (PyObject *)&KeySetType) < 0 ||
        PyModule_AddObjectRef(m, "Relaxation", (PyObject *)&RelaxationType) < 0 ||
        PyModule_AddObjectRef(m, "Search", (PyObject *)&SearchType) < 0 ||
        PyModule_AddStringConstant(m, "SOURCE_SHA256", SOURCE_SHA256) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

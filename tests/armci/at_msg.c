/* at_msg.c - message.h: ranks and timer, tagged send / receive (ordered,
 * any-source, zero length), barriers, the binary tree, broadcasts, global
 * operations over every type and operator and the node scope, and select
 * (armci_msg_sel). */
#include <math.h>

#include "at.h"

static void test_sendrecv(void)
{
    int to = (at_me + 1) % at_n, from = (at_me + at_n - 1) % at_n;
    /* Three messages in order on one tag, one on another tag, one empty. */
    for (int i = 0; i < 3; i++) {
        int v[100];
        for (int k = 0; k < 100; k++)
            v[k] = at_me * 1000 + i * 100 + k;
        armci_msg_snd(7, v, (int)sizeof v, to);
    }
    char big[3000]; /* eager in MPI: sent before the receive */
    at_fill(big, sizeof big, (unsigned)at_me);
    armci_msg_snd(8, big, (int)sizeof big, to);
    armci_msg_snd(9, NULL, 0, to);
    /* Receive tag 8 first: messages of other tags wait. */
    char rbig[3000];
    int len = -1;
    armci_msg_rcv(8, rbig, (int)sizeof rbig, &len, from);
    AT_ASSERT(len == (int)sizeof rbig, "tag 8 length %d", len);
    AT_ASSERT(at_check(rbig, sizeof rbig, (unsigned)from) < 0, "tag 8 data");
    for (int i = 0; i < 3; i++) {
        int v[100];
        armci_msg_rcv(7, v, (int)sizeof v, &len, from);
        AT_ASSERT(len == (int)sizeof v, "tag 7 length %d", len);
        for (int k = 0; k < 100; k++)
            AT_ASSERT(v[k] == from * 1000 + i * 100 + k,
                      "tag 7 message %d out of order", i);
    }
    armci_msg_rcv(9, NULL, 0, &len, from);
    AT_ASSERT(len == 0, "empty message length %d", len);
    armci_msg_barrier();
    /* Everyone sends to rank 0; it receives from any source. */
    int mine = at_me * 3;
    armci_msg_snd(11, &mine, (int)sizeof mine, 0);
    if (at_me == 0) {
        int seen = 0;
        for (int i = 0; i < at_n; i++) {
            int v = -1;
            int src = armci_msg_rcvany(11, &v, (int)sizeof v, &len);
            AT_ASSERT(src >= 0 && src < at_n && v == src * 3 &&
                          len == (int)sizeof v,
                      "rcvany got %d from %d", v, src);
            seen |= 1 << src;
        }
        AT_ASSERT(seen == (1 << at_n) - 1, "rcvany sources %x", seen);
    }
    armci_msg_barrier();
}

static void test_bcast_tree(void)
{
    int root, up, left, right;
    armci_msg_bintree(SCOPE_ALL, &root, &up, &left, &right);
    AT_ASSERT(root == 0, "bintree root %d", root);
    AT_ASSERT(up == (at_me == 0 ? -1 : (at_me - 1) / 2), "bintree up %d", up);
    AT_ASSERT(left == (2 * at_me + 1 < at_n ? 2 * at_me + 1 : -1),
              "bintree left %d", left);
    AT_ASSERT(right == (2 * at_me + 2 < at_n ? 2 * at_me + 2 : -1),
              "bintree right %d", right);
    for (int r = 0; r < at_n; r++) {
        char buf[3000];
        if (at_me == r)
            at_fill(buf, sizeof buf, (unsigned)(r + 40));
        else
            memset(buf, 0, sizeof buf);
        if (r % 3 == 0)
            armci_msg_bcast(buf, (int)sizeof buf, r);
        else if (r % 3 == 1)
            armci_msg_brdcst(buf, (int)sizeof buf, r);
        else
            armci_msg_bcast_scope(SCOPE_ALL, buf, (int)sizeof buf, r);
        AT_ASSERT(at_check(buf, sizeof buf, (unsigned)(r + 40)) < 0,
                  "broadcast from %d", r);
    }
}

static void test_gop(void)
{
    int n = at_n, me = at_me;
    long rsum = (long)n * (n - 1) / 2;
    int xi[3] = {me + 1, me + 1, -(me + 1)};
    armci_msg_igop(xi, 1, "+");
    armci_msg_igop(xi + 1, 1, "max");
    armci_msg_igop(xi + 2, 1, "min");
    AT_ASSERT(xi[0] == rsum + n && xi[1] == n && xi[2] == -n,
              "igop %d %d %d", xi[0], xi[1], xi[2]);
    long xl[2] = {me % 2 ? -(me + 2L) : me + 2L, me + 1L};
    armci_msg_lgop(xl, 1, "absmax");
    armci_msg_lgop(xl + 1, 1, "*");
    long fact = 1;
    for (int i = 1; i <= n; i++)
        fact *= i;
    AT_ASSERT(xl[0] == n + 1 && xl[1] == fact, "lgop %ld %ld", xl[0], xl[1]);
    long long xll[2] = {1LL << 40, me % 2 ? -(me + 3LL) : me + 3LL};
    armci_msg_llgop(xll, 1, "+");
    armci_msg_llgop(xll + 1, 1, "absmin");
    AT_ASSERT(xll[0] == (long long)n << 40 && xll[1] == 3,
              "llgop %lld %lld", xll[0], xll[1]);
    float xf[2] = {0.5f * (float)(me + 1), (float)me};
    armci_msg_fgop(xf, 1, "+");
    armci_msg_fgop(xf + 1, 1, "max");
    AT_ASSERT(xf[0] == 0.5f * (float)(rsum + n) && xf[1] == (float)(n - 1),
              "fgop %g %g", (double)xf[0], (double)xf[1]);
    double xd[4];
    for (int k = 0; k < 4; k++)
        xd[k] = me * 0.25 + k;
    armci_msg_dgop(xd, 4, "+");
    for (int k = 0; k < 4; k++)
        AT_ASSERT(xd[k] == 0.25 * (double)rsum + (double)(k * n),
                  "dgop [%d] %g", k, xd[k]);
    /* Integer logic. */
    int bits = 1 << me, any = me == n - 1, every = 1;
    armci_msg_igop(&bits, 1, "or");
    armci_msg_igop(&any, 1, "||");
    armci_msg_igop(&every, 1, "&&");
    AT_ASSERT(bits == (1 << n) - 1 && any == 1 && every == 1,
              "logic %x %d %d", bits, any, every);
    /* gop_scope over all and over the node (this rank alone). */
    int s = me + 1;
    armci_msg_gop_scope(SCOPE_ALL, &s, 1, "+", ARMCI_INT);
    AT_ASSERT(s == rsum + n, "gop_scope all %d", s);
    int node = me + 1;
    armci_msg_gop_scope(SCOPE_NODE, &node, 1, "+", ARMCI_INT);
    AT_ASSERT(node == me + 1, "gop_scope node %d", node);
    int m = me * 10;
    armci_msg_gop_scope(SCOPE_MASTERS, &m, 1, "max", ARMCI_INT);
    AT_ASSERT(m == (n - 1) * 10, "gop_scope masters %d", m);
}

static void test_sel(void)
{
    struct {
        double value;
        int index[3];
    } s = {fabs(1.5 - at_me) + 0.125 * at_me, {at_me, 2 * at_me, -at_me}};
    /* max of |1.5 - r| + r/8: the last rank (or rank 0 for n <= 2) */
    double best = -1;
    int who = -1;
    for (int r = 0; r < at_n; r++) {
        double v = fabs(1.5 - r) + 0.125 * r;
        if (v > best) {
            best = v;
            who = r;
        }
    }
    armci_msg_sel(&s, (int)sizeof s, "max", ARMCI_DOUBLE, 1);
    AT_ASSERT(s.value == best && s.index[0] == who && s.index[1] == 2 * who,
              "sel max: %g from %d", s.value, s.index[0]);
    /* min among contributors only (odd ranks, or everyone for n = 1) */
    int c = at_n == 1 || at_me % 2 == 1;
    long sl[2] = {100 - at_me, at_me};
    armci_msg_sel(sl, (int)sizeof sl, "min", ARMCI_LONG, c);
    int lo = at_n == 1 ? 0 : (at_n % 2 == 0 ? at_n - 1 : at_n - 2);
    AT_ASSERT(sl[0] == 100 - lo && sl[1] == lo, "sel min %ld from %ld",
              sl[0], sl[1]);
}

int main(int argc, char **argv)
{
    at_init(&argc, &argv);
    AT_ASSERT(at_me >= 0 && at_me < at_n, "armci_msg_me %d of %d", at_me,
              at_n);
    double t0 = armci_timer();
    test_sendrecv();
    test_bcast_tree();
    test_gop();
    test_sel();
    double t1 = armci_timer();
    AT_ASSERT(t1 >= t0, "armci_timer went back: %g -> %g", t0, t1);
    at_finish("msg");
    return 0;
}

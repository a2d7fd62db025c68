/* failover.pml: the hot standby's election, votes, leases, fencing and rejoin (qmaster/repl.c, qmaster/failover.c, qmaster/net.c, execd/witness.c, execd/link.c) as a Promela model, with the promises of issue 8 as assertions and an LTL property. */

/*
 * Two masters, three execds (the witnesses), a log of at most MAXLOG writes.
 * One process per independent actor of the code, so that spin's weak
 * fairness (pan -f: a process that stays able to move does move) means what
 * the code's event loops give: master(m) is one qmaster's loop (repl.c,
 * failover.c), link(e) an execd's connection to its master (link.c),
 * witness(e) its witness links and its lease clock (witness.c), env the
 * faults and the operator (kill -9, restarts, cut and healed links).
 *
 * Time is abstracted into leases: a lease is held until an "expire" step
 * ends it, and the holder's view ends at the same step as the granter's
 * promise (in the code the primary counts a lease from the time it SENT
 * the heartbeat, so its view ends first: the model is the tighter case).
 * Faults (crash, cut a link) are bounded by MAXFAULTS; heals and restarts
 * are free.  For safety every step may come at any time: a lease may run
 * out although its link works (a stalled process).  With -DLIVE such an
 * early expiry counts as a fault: liveness needs the partial synchrony any
 * failover needs (a HEARTBEAT every 250 ms against a 2 s timeout arrives in
 * time on a working link once the faults are over), and env may declare
 * the faults over (quiet).  Every step is atomic and ends with check(),
 * which asserts the invariants.
 */

#define NM        2
#define NE        3
#ifndef MAXLOG
#define MAXLOG    2
#endif
#define MAXEPOCH  4
#ifndef MAXFAULTS
#define MAXFAULTS 2
#endif
/* The assertions checked: a mask (check.sh checks each alone). */
#ifndef ONLY
#define ONLY      7
#endif
#ifdef LIVE
#define TIMELY    1
#else
#define TIMELY    0
#endif

#define DOWN     0
#define STANDBY  1
#define PRIMARY  2

/* link.c's states, with LINK_HELLO folded into the step that answers it. */
#define LDOWN    0            /* waiting for the retry timer */
#define LCONN    1            /* connecting to masters[lcur] */
#define LREADY   2            /* registered with masters[lcur] */

byte role[NM];
byte epoch[NM];
byte last[NM];                 /* store_repl_seq */
byte lg[NM * MAXLOG];         /* the epoch each entry was written in */
byte campaign[NM];            /* fo.campaign: the epoch a standby asks votes for; 0: none */
bool sbl[NM];                 /* m holds the other's standby lease (rp.standby_lease) */
bool sgone[NM];               /* the other master saw m's port refuse it since it last synced (rp.gone) */
bool egone[NM * NE];          /* execd e saw m's port refuse it since it last heard m (wlink.gone) */

byte promise[NE];             /* execd's lease: 0 none, m + 1 to master m (echo or vote) */
bool cnt[NE];                 /* that master counts it (lease_until, fo.votes: memory, lost in a crash) */
byte voted[NE];               /* SPOOL/voted_epoch */
byte vfor[NE];                /* the candidate that holds its vote then, m + 1 (fo.votes: memory) */
byte heard[NE];               /* wt.seq: the highest sequence a primary announced to it */
byte lst[NE];                 /* lk.state */
byte lcur[NE];                /* lk.cur */

bool linkmm = true;
bool linkme[NM * NE];

byte acked[MAXLOG];           /* ghost: epoch of the acknowledged entry k, 0: not acked */
byte top = 1;                 /* ghost: the highest epoch a master was promoted to */
byte faults;
bool quiet;                   /* ghost: env makes no more faults (LIVE) */
byte k;                       /* scratch for check() and snapshots, 0 between steps */
bool w0, w1;                  /* writable(0), writable(1), for the LTL property */

#define other(m)   (1 - (m))
#define LOG(m, k)  lg[(m) * MAXLOG + (k)]
#define LME(m, i)  linkme[(m) * NE + (i)]
#define EGONE(m, i) egone[(m) * NE + (i)]

#define HOLDS(m, e) (promise[e] == (m) + 1 && cnt[e])
#define PROMISES(m) (HOLDS(m, 0) + HOLDS(m, 1) + HOLDS(m, 2))
/* repl_writable: the standby's lease (counted by time alone: it outlives
 * the standby's link and role), or failover_have_majority: a majority of
 * the execds' leases (echoes or votes). */
#define WRITABLE(m) (role[m] == PRIMARY && (sbl[m] || PROMISES(m) * 2 > NE))
/* The execds that hold m's lease and heard sequence k + 1 (failover_witness_seq). */
#define HEARD(m, k) ((HOLDS(m, 0) && heard[0] > (k)) + (HOLDS(m, 1) && heard[1] > (k)) + (HOLDS(m, 2) && heard[2] > (k)))
/* The votes this candidate received for its campaign (fo.votes). */
#define VOTES(m) ((voted[0] == campaign[m] && vfor[0] == (m) + 1) + (voted[1] == campaign[m] && vfor[1] == (m) + 1) + \
	(voted[2] == campaign[m] && vfor[2] == (m) + 1))
/* The standby s may SYNC with p and echo its HEARTBEATs (repl_sync
 * refuses one of a newer epoch, or of the same with more: p rejoins). */
#define CANSYNC(s, p) (linkmm && role[s] == STANDBY && role[p] == PRIMARY && \
	(epoch[s] < epoch[p] || (epoch[s] == epoch[p] && last[s] <= last[p])))
/* Execd e, registered with master m, echoes m's HEARTBEAT (link_handle):
 * not one of an epoch older than its vote, nor one lacking a sequence it
 * heard announced. */
#define CANECHO(m, e) (lst[e] == LREADY && lcur[e] == (m) && LME(m, e) && role[m] == PRIMARY && \
	epoch[m] >= voted[e] && last[m] >= heard[e])
/* Enough links for some master to be writable: up, with a majority of the
 * execds reachable. */
#define MAJ(m) (role[m] != DOWN && LME(m, 0) + LME(m, 1) + LME(m, 2) >= 2)

/* The promises, after every step. */
inline check()
{
	w0 = WRITABLE(0);
	w1 = WRITABLE(1);
	/* At most one master accepts writes at any moment, so in any epoch. */
	assert((ONLY & 1) == 0 || !(w0 && w1));
	/* Fencing: once a master was promoted to an epoch, no master of an
	 * older one accepts writes (a partitioned old primary stops when its
	 * leases end, before the new one can be elected). */
	assert((ONLY & 2) == 0 || !w0 || epoch[0] >= top);
	assert((ONLY & 2) == 0 || !w1 || epoch[1] >= top);
	/* A write acknowledged to a client is on every writable primary, so
	 * on every later one. */
	do
	:: k < MAXLOG ->
		assert((ONLY & 4) == 0 || acked[k] == 0 || !w0 || (last[0] > k && LOG(0, k) == acked[k]));
		assert((ONLY & 4) == 0 || acked[k] == 0 || !w1 || (last[1] > k && LOG(1, k) == acked[k]));
		k++
	:: else -> k = 0; break
	od
}

/* Master m's process ends (kill -9, or repl_rejoin's execv): every READY
 * link to it breaks (link_down), and it forgets the leases and votes it
 * held; the execds keep their promises until they run out. */
inline forget(m, e)
{
	if :: lst[e] == LREADY && lcur[e] == m -> lst[e] = LDOWN :: else fi;
	if :: promise[e] == m + 1 -> cnt[e] = false :: else fi;
	if :: vfor[e] == m + 1 -> vfor[e] = 0 :: else fi
}

inline drop_links(m)
{
	forget(m, 0); forget(m, 1); forget(m, 2)
}

/* Master m's process ends: its port refuses new connections (gone_probe),
 * seen by the other master and by every execd it can reach; the word
 * stays until they hear m again, even after m restarted. */
inline refuse(m)
{
	sgone[m] = true;
	if :: LME(m, 0) -> EGONE(m, 0) = true :: else fi;
	if :: LME(m, 1) -> EGONE(m, 1) = true :: else fi;
	if :: LME(m, 2) -> EGONE(m, 2) = true :: else fi
}

/* Each step is one atomic action whose first statement is its guard, so
 * a step is taken only when it can complete. */

/* master(m): one qmaster's loop. */

/* A writable primary commits a write (a client's SUBMIT, let in by
 * conn_hello and the request table only while repl_writable). */
inline write(m)
{
	atomic { WRITABLE(m) && last[m] < MAXLOG ->
		LOG(m, last[m]) = epoch[m]; last[m]++; check() }
}

/* Its reply goes (repl_release, net_release): the standby applied it, or a
 * majority of the execds holding our lease heard its sequence
 * (failover_witness_seq). */
inline ack(m, q)
{
	atomic { role[m] == PRIMARY && last[m] > q && acked[q] == 0 &&
	    ((role[other(m)] == STANDBY && last[other(m)] > q && LOG(other(m), q) == LOG(m, q)) ||
	     HEARD(m, q) * 2 > NE) ->
		acked[q] = LOG(m, q); check() }
}

/* Replication (repl_up_frame): a standby of the same epoch takes the next
 * changeset (SYNC from its last, from the ring); one of another epoch, a
 * snapshot (repl_install_snapshot). */
inline repl(m)
{
	atomic { CANSYNC(m, other(m)) && (epoch[m] != epoch[other(m)] || last[m] < last[other(m)]) ->
		if
		:: epoch[m] == epoch[other(m)] ->
			LOG(m, last[m]) = LOG(other(m), last[m]); last[m]++
		:: else ->
			do
			:: k < MAXLOG -> LOG(m, k) = LOG(other(m), k); k++
			:: else -> k = 0; break
			od;
			last[m] = last[other(m)]; epoch[m] = epoch[other(m)]
		fi;
		sgone[other(m)] = false; check() }
}

/* The standby echoes the primary's HEARTBEAT (repl_up_frame): the
 * primary's lease on it (repl_heartbeat), and the standby has heard the
 * primary.  Whether or not it campaigns: the code echoes every HEARTBEAT. */
inline standby_echo(m)
{
	atomic { CANSYNC(m, other(m)) && (!sbl[other(m)] || sgone[other(m)]) ->
		sbl[other(m)] = true; sgone[other(m)] = false; check() }
}

/* The standby's lease runs out on the primary's side (rp.standby_lease):
 * freely when the standby cannot echo; early, as a fault, with LIVE. */
inline expire_standby(m)
{
	atomic { sbl[m] && (!TIMELY || !CANSYNC(other(m), m) || (!quiet && faults < MAXFAULTS)) ->
		if :: TIMELY && CANSYNC(other(m), m) -> faults++ :: else fi;
		sbl[m] = false; check() }
}

/* failover_primary_out: the primary's lease on the standby has ended (it
 * has not heard the primary for the failover timeout), or the primary's
 * port refused it since it last heard it (repl_primary_gone). */
#define OUT(m) (!sbl[other(m)] || sgone[other(m)])

/* failover_tick: a standby whose primary is out campaigns for epoch + 1. */
inline campaign_start(m)
{
	atomic { role[m] == STANDBY && OUT(m) && campaign[m] == 0 && epoch[m] < MAXEPOCH ->
		campaign[m] = epoch[m] + 1; check() }
}

/* failover_vote / failover_count_votes: a majority voted, and the
 * primary is still out: promotion with the new epoch
 * (repl_become_primary).  Without the second condition a HEARTBEAT echoed
 * between the campaign's start and the deciding vote leaves the old
 * primary writable on the standby's lease beside the new one. */
inline promote(m)
{
	atomic { campaign[m] != 0 && role[m] == STANDBY && VOTES(m) * 2 > NE && OUT(m) ->
		role[m] = PRIMARY; epoch[m] = campaign[m]; campaign[m] = 0;
		if :: epoch[m] > top -> top = epoch[m] :: else fi;
		check() }
}

/* failover_tick: the primary is heard again (quiet < timeout): the
 * campaign ends. */
inline campaign_end(m)
{
	atomic { campaign[m] != 0 && !OUT(m) ->
		campaign[m] = 0; check() }
}

/* A primary that meets a primary of a higher epoch (repl_probe_read_cb,
 * repl_probe), or a standby of a higher epoch or of ours with more (it
 * restarted on an old copy while the other was down: repl_sync), rejoins
 * as standby (repl_rejoin: it re-executes itself, so its execds' links
 * break); what it had beyond is replaced by a snapshot. */
inline rejoin(m)
{
	atomic { linkmm && role[m] == PRIMARY && role[other(m)] != DOWN &&
	    (epoch[other(m)] > epoch[m] ||
	     (role[other(m)] == STANDBY && epoch[other(m)] == epoch[m] && last[other(m)] > last[m])) ->
		role[m] = STANDBY; sbl[m] = false; drop_links(m); refuse(m); check() }
}

/* link(e): execd e's connection to a master (link.c). */

/* link_try_next: the next master of this round, or wait for the retry
 * timer (link_schedule_retry). */
inline try_next(e)
{
	if
	:: lcur[e] + 1 < NM -> lcur[e]++
	:: else -> lst[e] = LDOWN
	fi
}

/* link_retry_cb: a new round, from the first master. */
inline link_retry(e)
{
	atomic { lst[e] == LDOWN -> lcur[e] = 0; lst[e] = LCONN; check() }
}

/* link_event_cb: the connect fails (refused, or the 5 s timeout on a cut
 * link). */
inline link_fail(e)
{
	atomic { lst[e] == LCONN && (!LME(lcur[e], e) || role[lcur[e]] == DOWN) ->
		try_next(e); check() }
}

/* link_connected, link_hello, link_reply: HELLO and REGISTER answered.  A
 * standby redirects (conn_hello); a primary takes the execd whatever its
 * leases, since the echoes it will get are its leases (cf70c23; with
 * -DOLD_REDIRECT, as before: a primary without leases redirected execds
 * too); a master of an epoch older than our vote is left (fencing). */
inline link_hello(e)
{
	atomic { lst[e] == LCONN && LME(lcur[e], e) && role[lcur[e]] != DOWN ->
		if
		:: role[lcur[e]] != PRIMARY || epoch[lcur[e]] < voted[e] -> try_next(e)
#ifdef OLD_REDIRECT
		:: role[lcur[e]] == PRIMARY && epoch[lcur[e]] >= voted[e] && !WRITABLE(lcur[e]) -> try_next(e)
		:: role[lcur[e]] == PRIMARY && epoch[lcur[e]] >= voted[e] && WRITABLE(lcur[e]) -> lst[e] = LREADY
#else
		:: else -> lst[e] = LREADY
#endif
		fi;
		check() }
}

/* link_handle, MSG_HEARTBEAT: the execd echoes its master's HEARTBEAT
 * unless it voted past that master's epoch, or the master lacks a sequence
 * the execd heard announced (a master restarted on an old copy while the
 * other is down must not get leases: a write acknowledged on the execds'
 * word would be lost); it now knows the master's sequence
 * (witness_saw_seq).  The master counts the echo as a lease
 * (repl_heartbeat).  A lease held by the other master (a vote) is waited
 * out first: one lease per execd at a time in this model. */
inline execd_echo(m, e)
{
	atomic { CANECHO(m, e) && (promise[e] == 0 || (promise[e] == m + 1 && (heard[e] < last[m] || !cnt[e]))) ->
		promise[e] = m + 1; cnt[e] = true; heard[e] = last[m]; EGONE(m, e) = false; check() }
}

/* The keepalive gives up on a registered link that was cut (link_down). */
inline link_lost(e)
{
	atomic { lst[e] == LREADY && !LME(lcur[e], e) -> lst[e] = LDOWN; check() }
}

/* witness(e): execd e's witness links and lease clock (witness.c). */

/* witness_vote_request: once per epoch, only holding no lease (it has not
 * heard a primary for the failover timeout, nor voted within it) or only
 * one to the other master whose port refused it since it last heard it
 * and with which it is not registered (witness_others_gone), only for
 * a candidate with the sequence it heard; the vote is a lease to the
 * candidate.  Then link_fence: a registered link to a master of an older
 * epoch is dropped, and a link that is down tries the candidate first
 * (cf70c23; with -DOLD_ORDER, as before: from the first master). */
inline vote(m, e)
{
	atomic { campaign[m] != 0 && role[m] == STANDBY && LME(m, e) && voted[e] < campaign[m] &&
	    (promise[e] == 0 || (promise[e] == other(m) + 1 && EGONE(other(m), e) &&
	     !(lst[e] == LREADY && lcur[e] == other(m)))) && last[m] >= heard[e] ->
		voted[e] = campaign[m]; vfor[e] = m + 1; promise[e] = m + 1; cnt[e] = true;
		if :: lst[e] == LREADY && epoch[lcur[e]] < voted[e] -> lst[e] = LDOWN :: else fi;
		if
		:: lst[e] == LDOWN ->
#ifdef OLD_ORDER
			lcur[e] = 0;
#else
			lcur[e] = m;
#endif
			lst[e] = LCONN
		:: else
		fi;
		check() }
}

/* A lease runs out: the failover timeout passed without an echo (the
 * execd's link_last_heard and voted_at; the master's lease_until and the
 * vote's at).  Freely when the execd cannot echo the lease's holder;
 * early, as a fault, with LIVE. */
inline expire_execd(e)
{
	atomic { promise[e] != 0 && (!TIMELY || !CANECHO(promise[e] - 1, e) || (!quiet && faults < MAXFAULTS)) ->
		if :: TIMELY && CANECHO(promise[e] - 1, e) -> faults++ :: else fi;
		promise[e] = 0; cnt[e] = false; check() }
}

/* env: faults, heals and restarts. */

/* kill -9 of a master: its connections break. */
inline crash(m)
{
	atomic { !quiet && faults < MAXFAULTS && role[m] != DOWN ->
		role[m] = DOWN; campaign[m] = 0; sbl[m] = false; drop_links(m); refuse(m); faults++; check() }
}

/* A restart follows a primary it can reach, else serves as primary of
 * its own epoch (repl_start). */
inline restart(m)
{
	atomic { role[m] == DOWN ->
		if
		:: linkmm && role[other(m)] == PRIMARY -> role[m] = STANDBY
		:: else -> role[m] = PRIMARY
		fi;
		check() }
}

inline cut_execd(m, e)
{
	atomic { !quiet && faults < MAXFAULTS && LME(m, e) -> LME(m, e) = false; faults++; check() }
}

inline heal_execd(m, e)
{
	atomic { !LME(m, e) -> LME(m, e) = true; check() }
}

proctype master(byte m)
{
end:	do
	:: write(m)
	:: ack(m, 0)
	:: ack(m, 1)
	:: repl(m)
	:: standby_echo(m)
	:: expire_standby(m)
	:: campaign_start(m)
	:: promote(m)
	:: campaign_end(m)
	:: rejoin(m)
	od
}

proctype link(byte e)
{
end:	do
	:: link_retry(e)
	:: link_fail(e)
	:: link_hello(e)
	:: execd_echo(0, e)
	:: execd_echo(1, e)
	:: link_lost(e)
	od
}

proctype witness(byte e)
{
end:	do
	:: vote(0, e)
	:: vote(1, e)
	:: expire_execd(e)
	od
}

/* env, after the start: master 0 primary with every execd registered,
 * master 1 its standby in sync, epoch 1.  The faults stop (quiet) in LIVE
 * runs; then links heal and masters restart, or not: env may end with a
 * link cut or a master down for good. */
init
{
	atomic {
		role[0] = PRIMARY; role[1] = STANDBY;
		epoch[0] = 1; epoch[1] = 1;
		sbl[0] = true;
		do
		:: k < NM * NE -> linkme[k] = true; k++
		:: else -> k = 0; break
		od;
		lst[0] = LREADY; lst[1] = LREADY; lst[2] = LREADY;
		promise[0] = 1; promise[1] = 1; promise[2] = 1;
		cnt[0] = true; cnt[1] = true; cnt[2] = true;
		run master(0); run master(1);
		run link(0); run link(1); run link(2);
		run witness(0); run witness(1); run witness(2)
	}
end:	do
	:: crash(0)
	:: crash(1)
	:: restart(0)
	:: restart(1)
	:: cut_execd(0, 0)
	:: cut_execd(0, 1)
	:: cut_execd(0, 2)
	:: cut_execd(1, 0)
	:: cut_execd(1, 1)
	:: cut_execd(1, 2)
	:: heal_execd(0, 0)
	:: heal_execd(0, 1)
	:: heal_execd(0, 2)
	:: heal_execd(1, 0)
	:: heal_execd(1, 1)
	:: heal_execd(1, 2)
	:: atomic { !quiet && faults < MAXFAULTS && linkmm -> linkmm = false; faults++; check() }
	:: atomic { !linkmm -> linkmm = true; check() }
#ifdef LIVE
	:: atomic { !quiet -> quiet = true }
	:: quiet -> break
#endif
	od
}

/* Once the faults are over and some master is up with a majority of the
 * execds reachable, some master is writable again and again. */
#define calm (quiet && (MAJ(0) || MAJ(1)))
ltl live { (<> [] calm) -> [] <> (w0 || w1) }

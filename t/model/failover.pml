/* failover.pml: the hot standby's election, votes, leases, fencing and rejoin (qmaster/repl.c, qmaster/failover.c, execd/witness.c, execd/link.c) as a Promela model, with the promises of issue 8 as assertions and an LTL property. */

/*
 * Two masters, three execds (the witnesses), a log of at most MAXLOG writes.
 * Time is abstracted into leases: a lease is held until an "expire" step
 * ends it, and the holder's view ends at the same step as the granter's
 * promise (in the code the primary counts a lease from the time it SENT
 * the heartbeat, so its view ends first: the model is the tighter case).
 * Faults (crash, cut a link) are bounded by MAXFAULTS; heals are free.
 * Every step is one atomic action of the single process below, so spin
 * explores every interleaving of them; after each, check() asserts the
 * invariants.
 */

#define NM        2
#define NE        3
#define MAXLOG    2
#define MAXEPOCH  4
#ifndef MAXFAULTS
#define MAXFAULTS 2
#endif

#define DOWN     0
#define STANDBY  1
#define PRIMARY  2

byte role[NM];
byte epoch[NM];
byte last[NM];                 /* store_repl_seq */
byte lg[NM * MAXLOG];         /* the epoch each entry was written in */
byte campaign[NM];            /* the epoch a standby asks votes for; 0: none */

bool sbl;                     /* the standby's lease to the primary (its HEARTBEAT echo) */
byte promise[NE];             /* execd's lease: 0 none, m + 1 to master m (echo or vote) */
byte voted[NE];               /* SPOOL/voted_epoch */
byte vfor[NE];                /* the candidate it voted for then, m + 1 */
byte heard[NE];               /* the highest sequence a primary announced to it */

bool linkmm = true;
bool linkme[NM * NE];

byte acked[MAXLOG];           /* ghost: epoch of the acknowledged entry k, 0: not acked */
byte faults;
byte k;                       /* scratch for check() and snapshots */
bool w0, w1;                  /* writable(0), writable(1), for the LTL property */

#define other(m)   (1 - (m))
#define LOG(m, k)  lg[(m) * MAXLOG + (k)]
#define LME(m, i)  linkme[(m) * NE + (i)]

#define PROMISES(m) ((promise[0] == (m) + 1) + (promise[1] == (m) + 1) + (promise[2] == (m) + 1))
/* failover_have_majority / repl_writable: the standby's lease, or a
 * majority of the execds' leases (echoes or votes). */
#define WRITABLE(m) (role[m] == PRIMARY && ((sbl && role[other(m)] == STANDBY) || PROMISES(m) * 2 > NE))
/* The execds that hold m's lease and heard sequence k + 1. */
#define HEARD(m, k) ((promise[0] == (m) + 1 && heard[0] > (k)) + (promise[1] == (m) + 1 && heard[1] > (k)) + \
	(promise[2] == (m) + 1 && heard[2] > (k)))
/* The votes this candidate received for its campaign (fo.votes). */
#define VOTES(m) ((voted[0] == campaign[m] && vfor[0] == (m) + 1) + (voted[1] == campaign[m] && vfor[1] == (m) + 1) + \
	(voted[2] == campaign[m] && vfor[2] == (m) + 1))

/* The promises, after every step. */
inline check()
{
	w0 = WRITABLE(0);
	w1 = WRITABLE(1);
	/* At most one master accepts writes at any moment, so in any epoch. */
	assert(!(w0 && w1));
	/* A write acknowledged to a client is on every writable primary. */
	k = 0;
	do
	:: k < MAXLOG ->
		assert(acked[k] == 0 || !w0 || (last[0] > k && LOG(0, k) == acked[k]));
		assert(acked[k] == 0 || !w1 || (last[1] > k && LOG(1, k) == acked[k]));
		k++
	:: else -> break
	od
}


/* Each step is one atomic action whose first statement is its guard, so
 * a step is taken only when it can complete. */

/* A writable primary commits a write (a client's SUBMIT). */
inline write(m)
{
	atomic { WRITABLE(m) && last[m] < MAXLOG ->
		LOG(m, last[m]) = epoch[m]; last[m]++; check() }
}

/* Its reply goes (net_release): the standby applied it, or a majority of
 * the execds holding our lease heard its sequence (failover_witness_seq). */
inline ack(m, q)
{
	atomic { role[m] == PRIMARY && last[m] > q && acked[q] == 0 &&
	    ((role[other(m)] == STANDBY && last[other(m)] > q && LOG(other(m), q) == LOG(m, q)) ||
	     HEARD(m, q) * 2 > NE) ->
		acked[q] = LOG(m, q); check() }
}

/* Replication: a standby of the same epoch takes the next changeset (SYNC
 * from its last, from the ring); one of another epoch, a snapshot. */
inline repl(m)
{
	atomic { linkmm && role[m] == STANDBY && role[other(m)] == PRIMARY && epoch[other(m)] >= epoch[m] &&
	    (epoch[m] != epoch[other(m)] || last[m] < last[other(m)]) ->
		if
		:: epoch[m] == epoch[other(m)] ->
			LOG(m, last[m]) = LOG(other(m), last[m]); last[m]++
		:: else ->
			k = 0;
			do
			:: k < MAXLOG -> LOG(m, k) = LOG(other(m), k); k++
			:: else -> break
			od;
			last[m] = last[other(m)]; epoch[m] = epoch[other(m)]
		fi;
		check() }
}

/* The standby echoes the primary's HEARTBEAT: the primary's lease on it.
 * Only a standby that SYNCed: not one of a newer epoch, nor one of the same
 * epoch with more (repl_sync refuses both, and the primary rejoins). */
inline standby_echo(m)
{
	atomic { linkmm && role[m] == PRIMARY && role[other(m)] == STANDBY && !sbl &&
	    (epoch[other(m)] < epoch[m] || (epoch[other(m)] == epoch[m] && last[other(m)] <= last[m])) &&
	    campaign[other(m)] == 0 ->
		sbl = true; check() }
}

/* An execd echoes the HEARTBEAT of its master (link.c) unless it voted
 * past that master's epoch, or the master lacks a sequence the execd heard
 * announced (a master restarted on an old copy while the other is down
 * must not get leases: a write acknowledged on the execds' word would be
 * lost); it now knows the master's sequence. */
inline execd_echo(m, e)
{
	atomic { LME(m, e) && role[m] == PRIMARY && epoch[m] >= voted[e] && last[m] >= heard[e] &&
	    (promise[e] == 0 || (promise[e] == m + 1 && heard[e] < last[m])) ->
		promise[e] = m + 1; heard[e] = last[m]; check() }
}

/* Leases run out: the failover timeout passed without an echo. */
inline expire_execd(e)
{
	atomic { promise[e] != 0 -> promise[e] = 0; check() }
}

/* A standby whose lease to the primary ran out campaigns for epoch + 1. */
inline campaign_start(m)
{
	atomic { role[m] == STANDBY && !sbl && campaign[m] == 0 && epoch[m] < MAXEPOCH ->
		campaign[m] = epoch[m] + 1; check() }
}

/* An execd votes (witness.c): once per epoch, only holding no lease, only
 * for a candidate with the sequence it heard; the vote is a lease to the
 * candidate (it votes again only after the failover timeout). */
inline vote(m, e)
{
	atomic { campaign[m] != 0 && role[m] == STANDBY && LME(m, e) && voted[e] < campaign[m] &&
	    promise[e] == 0 && last[m] >= heard[e] ->
		voted[e] = campaign[m]; vfor[e] = m + 1; promise[e] = m + 1; check() }
}

/* A majority voted: promotion with the new epoch. */
inline promote(m)
{
	atomic { campaign[m] != 0 && role[m] == STANDBY && VOTES(m) * 2 > NE ->
		role[m] = PRIMARY; epoch[m] = campaign[m]; campaign[m] = 0; sbl = false; check() }
}

/* The primary is heard again: the campaign ends. */
inline campaign_end(m)
{
	atomic { campaign[m] != 0 && linkmm && role[other(m)] == PRIMARY && epoch[other(m)] >= epoch[m] ->
		campaign[m] = 0; check() }
}

/* A primary that meets a primary of a higher epoch, or a standby of a
 * higher epoch or of ours with more (it restarted on an old copy while the
 * other was down), rejoins as standby (repl_rejoin, from repl_probe and
 * repl_sync); what it had beyond is replaced by a snapshot. */
inline rejoin(m)
{
	atomic { linkmm && role[m] == PRIMARY && role[other(m)] != DOWN &&
	    (epoch[other(m)] > epoch[m] ||
	     (role[other(m)] == STANDBY && epoch[other(m)] == epoch[m] && last[other(m)] > last[m])) ->
		role[m] = STANDBY; sbl = false; check() }
}

/* Faults: kill -9 of a master; a cut link. */
inline crash(m)
{
	atomic { faults < MAXFAULTS && role[m] != DOWN ->
		role[m] = DOWN; campaign[m] = 0; sbl = false; faults++; check() }
}

inline cut_execd(m, e)
{
	atomic { faults < MAXFAULTS && LME(m, e) -> LME(m, e) = false; faults++; check() }
}

inline heal_execd(m, e)
{
	atomic { !LME(m, e) -> LME(m, e) = true; check() }
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

active proctype world()
{
	atomic {
		role[0] = PRIMARY; role[1] = STANDBY;
		epoch[0] = 1; epoch[1] = 1;
		k = 0;
		do
		:: k < NM * NE -> linkme[k] = true; k++
		:: else -> break
		od
	}
end:	do
	:: write(0)
	:: repl(0)
	:: standby_echo(0)
	:: campaign_start(0)
	:: promote(0)
	:: campaign_end(0)
	:: rejoin(0)
	:: crash(0)
	:: restart(0)
	:: ack(0, 0)
	:: ack(0, 1)
	:: execd_echo(0, 0)
	:: vote(0, 0)
	:: cut_execd(0, 0)
	:: heal_execd(0, 0)
	:: execd_echo(0, 1)
	:: vote(0, 1)
	:: cut_execd(0, 1)
	:: heal_execd(0, 1)
	:: execd_echo(0, 2)
	:: vote(0, 2)
	:: cut_execd(0, 2)
	:: heal_execd(0, 2)
	:: write(1)
	:: repl(1)
	:: standby_echo(1)
	:: campaign_start(1)
	:: promote(1)
	:: campaign_end(1)
	:: rejoin(1)
	:: crash(1)
	:: restart(1)
	:: ack(1, 0)
	:: ack(1, 1)
	:: execd_echo(1, 0)
	:: vote(1, 0)
	:: cut_execd(1, 0)
	:: heal_execd(1, 0)
	:: execd_echo(1, 1)
	:: vote(1, 1)
	:: cut_execd(1, 1)
	:: heal_execd(1, 1)
	:: execd_echo(1, 2)
	:: vote(1, 2)
	:: cut_execd(1, 2)
	:: heal_execd(1, 2)
	:: expire_execd(0)
	:: expire_execd(1)
	:: expire_execd(2)
	:: atomic { sbl -> sbl = false; check() }
	:: atomic { faults < MAXFAULTS && linkmm -> linkmm = false; faults++; check() }
	:: atomic { !linkmm -> linkmm = true; check() }
	od
}

/* Calm: no fault left to happen, every link up, a master up.  Then some
 * master is writable again and again. */
#define calm (faults == MAXFAULTS && linkmm && linkme[0] && linkme[1] && linkme[2] && \
	linkme[3] && linkme[4] && linkme[5] && (role[0] != DOWN || role[1] != DOWN))
ltl live { [] (calm -> <> (w0 || w1)) }

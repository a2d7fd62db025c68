#!/usr/bin/env bats
# soak.bats: a bounded soak on loopback (bench/soak, 15 s): submitters, a deleter and a querier beside a garbage sender and idle connections; every acknowledged job is accounted for and the master's memory stays bounded.

load helpers

figure() { awk -v k="$1" '$1 == k { print $2 }' "$SOAK_OUT"; }

@test "under garbage and idle connections every acknowledged job is accounted for and memory stays bounded" {
	SOAK_OUT="$BATS_FILE_TMPDIR/soak.out"
	"$top_srcdir/bench/soak" 15 500 "$NOWQ_BIN" > "$SOAK_OUT" 2>"$BATS_FILE_TMPDIR/soak.err"
	cat "$SOAK_OUT" "$BATS_FILE_TMPDIR/soak.err"
	[ "$(figure soak_idle_connections)" -eq 500 ]
	[ "$(figure soak_acknowledged)" -gt 5 ]
	[ "$(figure soak_garbage_connections)" -gt 100 ]
	[ "$(figure soak_unaccounted)" -eq 0 ]
	[ "$(figure soak_without_accounting)" -eq 0 ]
	[ "$(figure soak_refused)" -eq 0 ]
	[ "$(figure soak_master_alive)" -eq 1 ]
	[ "$(figure soak_fatal_lines)" -eq 0 ]
	# Generous: after the warm-up, growth is allocator slack, not a leak
	# that scales with the requests.
	[ "$(figure soak_rss_end)" -lt $(( $(figure soak_rss_warm) * 2 + 51200 )) ]
}

#!/usr/bin/env bats
# tree.bats: the source tree itself: no tracked file holds the markers a merge conflict leaves behind.

@test "no tracked file holds merge-conflict markers" {
	git -C "$top_srcdir" rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
		skip "not a git checkout (a release tarball)"
	# The markers are seven of one character at the start of a line; a
	# line of "=" alone is also a Markdown heading's underline, so only
	# the two ends (and diff3's middle) count.
	run git -C "$top_srcdir" grep -nIE '^(<{7}|>{7}|[|]{7})( |$)'
	echo "$output"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
}

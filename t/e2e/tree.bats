#!/usr/bin/env bats
# tree.bats: the source tree itself: no merge-conflict markers, and each folder includes only the headers of the folders below it.

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

# common <- spool <- qmaster; common <- execd; common <- client <- drmaa: a
# folder includes its own headers and those of the folders it may depend
# on, so the two daemons share code only through common/.
@test "each folder includes only headers of the folders it may depend on" {
	local bad=
	bad=$(cd "$top_srcdir" && awk '
		FNR == 1 {
			dir = FILENAME; sub(/\/.*/, "", dir)
			ok = " common " dir " "
			if (dir == "qmaster")
				ok = " common spool qmaster "
			if (dir == "drmaa")
				ok = " common client drmaa "
		}
		/^[ \t]*#[ \t]*include[ \t]*"/ {
			inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
			if (inc !~ /\//)
				next
			top = inc; sub(/\/.*/, "", top)
			if (index(ok, " " top " ") == 0)
				printf "%s:%d: %s may not include %s\n", FILENAME, FNR, dir, inc
		}' common/*.[ch] spool/*.[ch] qmaster/*.[ch] execd/*.[ch] client/*.[ch] drmaa/*.[ch])
	echo "$bad"
	[ -z "$bad" ]
}

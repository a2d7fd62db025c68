#!/usr/bin/env bats
# completion.bats: the bash completion, sourced as bash-completion would, completes each command's options from its --help, values of options, subcommands, and job ids from a live master.

load helpers

comp() {
	# comp WORD...: completes the last word; prints the candidates.
	COMP_WORDS=("$@")
	COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
	COMPREPLY=()
	_nowq
	printf '%s\n' "${COMPREPLY[@]}"
}

setup() {
	. "$top_srcdir/etc/bash-completion/nowq"
}

@test "the completion is registered for every command the Makefile links" {
	links=$(sed -n 's/^CLIENT_LINKS = //p' "$top_srcdir/Makefile.am")
	for c in nowq $links; do
		complete -p "$c" | grep -q -- "-F _nowq" || { echo "no completion for $c"; return 1; }
	done
}

@test "options complete from each command's --help" {
	[ "$(comp qsub -ter)" = -terse ]
	[ "$(comp qwait --j)" = --json ]
	[[ "$(comp qstat -)" == *--json* ]]
	[[ "$(comp qacct -)" == *-j* ]]
	[ "$(comp nowq qsub -sy)" = -sync ]
	[ -z "$(comp qsub -no-such-option)" ]
}

@test "option values and nowq's subcommands complete" {
	[ "$(comp qsub -j '')" = "$(printf 'y\nn')" ]
	[ "$(comp nowq st)" = "$(printf 'start\nstop\nstatus')" ]
	[ "$(comp nowq start --sl)" = --slots ]
}

@test "job ids complete from the master, and a master that is down gives nothing quickly" {
	cluster_start
	id=$(qsub -terse -h -b y true)
	[ "$(comp qdel '')" = "$id" ]
	[ "$(comp qwait "${id:0:1}")" = "$id" ]
	qdel "$id" >/dev/null
	cluster_stop
	start=$SECONDS
	[ -z "$(comp qdel '')" ]
	[ $((SECONDS - start)) -lt 5 ]
}

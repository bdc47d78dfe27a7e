# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Bash completion for optrace: commands, each command's flags (read from its
# --help, so they never go stale), pids of processes that map liboptrace
# after -p, capture files for report and export, directories for
# export --legion -o.

_optrace_pids()
{
	local maps pid
	for maps in /proc/[0-9]*/maps; do
		pid=${maps#/proc/}
		pid=${pid%/maps}
		grep -qs 'liboptrace\.so' "$maps" 2>/dev/null && printf '%s\n' "$pid"
	done
}

_optrace_flags()
{
	"$1" "$2" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*\(=[A-Z]*\)\?' |
		sed 's/=.*/=/' | sort -u
	printf '%s\n' -h --help
}

_optrace()
{
	local cur prev words cword command i
	_init_completion -n = || return

	command=
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--) return ;; # the traced command's own words: left to bash
		-*) ;;
		*)
			command=${words[i]}
			break
			;;
		esac
	done
	if [[ -z $command ]]; then
		COMPREPLY=($(compgen -W 'list stat top record report export serve dump --help' -- "$cur"))
		return
	fi

	case $prev in
	-p | --pid)
		COMPREPLY=($(compgen -W "$(_optrace_pids)" -- "$cur"))
		return
		;;
	-o | --output)
		if [[ $command == export ]] && [[ " ${words[*]} " == *" --legion "* ]]; then
			_filedir -d
		else
			_filedir
		fi
		return
		;;
	--gpu | --lib | --web-config)
		_filedir
		return
		;;
	-d | --duration | --ringbuf | --retention | --legion-version | --listen | -T)
		return
		;;
	esac

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_optrace_flags "${words[0]}" "$command")" -- "$cur"))
		[[ ${COMPREPLY-} == *= ]] && compopt -o nospace
		return
	fi
	case $command in
	report | export)
		_filedir '@(capture|optrace|partial|bin)'
		[[ ${#COMPREPLY[@]} -eq 0 ]] && _filedir
		;;
	list)
		_filedir
		;;
	esac
} && complete -F _optrace optrace

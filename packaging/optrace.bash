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

# Each long flag once: "--name=" where it takes a value, else "--name".
_optrace_flags()
{
	{
		printf '%s\n' -h --help
		"$1" "$2" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*\(=[A-Z]*\)\?' |
			sed 's/=.*/=/'
	} | awk '{ name = $0; sub(/=$/, "", name)
		   if (!(name in flag)) { order[++count] = name; flag[name] = $0 }
		   else if ($0 ~ /=$/) flag[name] = $0 }
		 END { for (i = 1; i <= count; i++) print flag[order[i]] }'
}

_optrace()
{
	local cur prev words cword command i
	_init_completion -n = || return

	# after --, the traced command and its words, completed as that command's
	for ((i = 1; i < cword; i++)); do
		if [[ ${words[i]} == -- ]]; then
			_command_offset $((i + 1))
			return
		fi
	done
	command=
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
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
	-d | --duration | --ringbuf | --retention | --legion-version | --listen | --stuck)
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

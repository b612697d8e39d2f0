# Shared by the dispatch adapters (sourced, not run): the submit options of the contract, the
# deterministic job name, the JSON handle, --dry-run printing. See docs/dispatch.md.
# shellcheck shell=bash

# The submit options every adapter takes (placeholders of the dispatch config):
#   --plan-id {plan_id} --correlation-id {correlation_id} --attempt {attempt}
#   --base-commit {base_commit} --branch {branch} --remote {remote} [--plan-path {plan_path}]
#   [--summary-path {summary_path}]   committed by the job when the executor left it uncommitted
#   -- EXECUTOR ARG...      the executor's argv, run in the job's clone
#   [--time-minutes N] [--cpus N] [--memory-mb N] [--gpus N]   the plan's resources (its frontmatter)
plan_id= corr= attempt= base= branch= remote= plan_path= summary_path= dry_run=0
res_time= res_cpus= res_mem= res_gpus=
executor=()

dispatch_usage() { echo "$adapter: $*" >&2; exit 64; }

# dispatch_common_opt NAME VALUE: 0 when NAME is a common submit option (VALUE stored).
dispatch_common_opt() {
  case $1 in
    --plan-id) plan_id=$2 ;;
    --correlation-id) corr=$2 ;;
    --attempt) attempt=$2 ;;
    --base-commit) base=$2 ;;
    --branch) branch=$2 ;;
    --remote) remote=$2 ;;
    --plan-path) plan_path=$2 ;;
    --summary-path) summary_path=$2 ;;
    --time-minutes) res_time=$2 ;;
    --cpus) res_cpus=$2 ;;
    --memory-mb) res_mem=$2 ;;
    --gpus) res_gpus=$2 ;;
    *) return 1 ;;
  esac
}

dispatch_check_submit() {
  [ -n "$plan_id" ] || dispatch_usage "submit needs --plan-id"
  [ -n "$corr" ] || dispatch_usage "submit needs --correlation-id"
  [ -n "$attempt" ] || dispatch_usage "submit needs --attempt"
  [ -n "$base" ] || dispatch_usage "submit needs --base-commit"
  [ -n "$branch" ] || dispatch_usage "submit needs --branch"
  [ -n "$remote" ] || dispatch_usage "submit needs --remote"
  [ ${#executor[@]} -gt 0 ] || dispatch_usage "submit needs the executor's argv after --"
  case $attempt in *[!0-9]*) dispatch_usage "--attempt '$attempt' is not a number" ;; esac
  case $base in *[!0-9a-fA-F]*) dispatch_usage "--base-commit '$base' is not a commit id" ;; esac
  local r
  for r in "$res_time" "$res_cpus" "$res_mem" "$res_gpus"; do
    case $r in *[!0-9]*) dispatch_usage "a resource option is not a whole number: '$r'" ;; esac
  done
}

# The job's name, from (correlation id, plan id, attempt) only: the same three give the same
# name, so a second submit finds the first job. Lower case, [a-z0-9-], at most 63 characters
# (a Kubernetes name); readable part (plan id, attempt) plus 12 hex of a sha256 of all three.
dispatch_job_name() {
  local hash readable
  hash=$(printf '%s\n%s\n%s' "$corr" "$plan_id" "$attempt" | sha256sum | cut -c1-12)
  readable=$(printf '%s' "$plan_id" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9' '-' | tr -s '-' | cut -c1-32)
  readable=${readable#-}
  readable=${readable%-}
  printf 'yolo-%s-a%s-%s' "${readable:-plan}" "$attempt" "$hash"
}

# The executor's argv as one string: NUL-separated, base64 (for string-only transports).
dispatch_executor_b64() {
  printf '%s\0' "${executor[@]}" | base64 -w0
}

json_escape() {  # a JSON string body for $1
  local s=$1
  s=${s//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\n'/\\n}; s=${s//$'\t'/\\t}; s=${s//$'\r'/\\r}
  printf '%s' "$s"
}

# dispatch_print_handle HANDLE URL NAME REUSED: the one JSON object submit prints.
dispatch_print_handle() {
  printf '{"handle": "%s", "url": "%s", "job_name": "%s", "reused": %s}\n' \
    "$(json_escape "$1")" "$(json_escape "$2")" "$(json_escape "$3")" "$4"
}

# dispatch_show ARGV...: a command as a shell would need it typed (what --dry-run prints):
# plain words as they are, others in single quotes.
dispatch_show() {
  local out= a q="'" re='^[][A-Za-z0-9_./=:,+@%{}^-]+$'
  for a in "$@"; do
    if [[ $a =~ $re ]]; then out+="${out:+ }$a"; else out+="${out:+ }'${a//$q/$q\\$q$q}'"; fi
  done
  printf '%s\n' "$out"
}

# dispatch_run ARGV...: runs it, or with --dry-run prints it and succeeds.
dispatch_run() {
  if [ "$dry_run" -eq 1 ]; then dispatch_show "$@"; return 0; fi
  "$@"
}

# The run-job options for the common submit options (argv).
dispatch_run_job_args() {
  run_job_args=(--remote "$remote" --base-commit "$base" --branch "$branch" --plan-id "$plan_id"
                --correlation-id "$corr" --attempt "$attempt" --plan-path "$plan_path")
  [ -z "$summary_path" ] || run_job_args+=(--summary-path "$summary_path")
}

# dispatch_log_reason LOG: the job script's last "run-job: ✗ ..." line, on stderr, when the log
# is readable here (why the job failed, for the runner's finding).
dispatch_log_reason() {
  [ -n "$1" ] && [ -r "$1" ] || return 0
  grep -a '^run-job: ✗' "$1" 2>/dev/null | tail -n 1 >&2 || true
}

# The wave-level form (submit-wave): dispatch_each_task FILE FUNC reads a wave's task file (per
# task: its argument count, then its arguments, every one NUL-terminated; the arguments are
# the plan's submit options from --plan-id on) and, for each task, sets the common options as
# submit does, `task_opts` to the other options (NAME VALUE pairs, for the adapter), checks
# them as submit does, then runs FUNC INDEX. Sets tasks_n to the number of tasks.
dispatch_each_task() {
  local file=$1 fn=$2 count k v a n=0 wave_corr=$corr
  local -a targs
  exec 3<"$file" || dispatch_usage "--tasks '$file' cannot be read"
  while IFS= read -r -d '' count <&3; do
    case $count in "" | *[!0-9]*) dispatch_usage "--tasks: task $n has no argument count" ;; esac
    targs=()
    for ((k = 0; k < count; k++)); do
      IFS= read -r -d '' a <&3 || dispatch_usage "--tasks: task $n is cut short"
      targs+=("$a")
    done
    plan_id= corr= attempt= base= branch= remote= plan_path= summary_path= executor=() task_opts=()
    res_time= res_cpus= res_mem= res_gpus=
    set -- "${targs[@]}"
    while [ $# -gt 0 ]; do
      a=$1
      case $a in
        --) shift; executor=("$@"); break ;;
        --*=*) k=${a%%=*}; v=${a#*=}; shift ;;
        --*) [ $# -ge 2 ] || dispatch_usage "task $n: $a needs a value"; k=$a; v=$2; shift 2 ;;
        *) dispatch_usage "task $n: unexpected argument '$a'" ;;
      esac
      dispatch_common_opt "$k" "$v" || task_opts+=("$k" "$v")
    done
    dispatch_check_submit
    [ -z "$wave_corr" ] || [ "$corr" = "$wave_corr" ] || dispatch_usage "task $n: --correlation-id differs from the wave's"
    "$fn" "$n"
    n=$((n + 1))
  done
  exec 3<&-
  [ "$n" -gt 0 ] || dispatch_usage "--tasks '$file' holds no task"
  corr=$wave_corr
  tasks_n=$n
}

# dispatch_task_case INDEX: one `case` branch of a wave's job script: the arguments run-job
# gets for task INDEX (shell-quoted by printf %q; the script is bash). dispatch_task_case_into
# INDEX sets task_case to it without a subshell: a wave of a thousand tasks forks nothing per
# task (on a loaded login node a fork costs milliseconds).
dispatch_task_case_into() {
  local q
  dispatch_run_job_args
  printf -v q ' %q' "${run_job_args[@]}" -- "${executor[@]}"
  task_case="  $1) set --$q ;;"$'\n'
}
dispatch_task_case() {
  dispatch_task_case_into "$1"
  printf '%s' "$task_case"
}

# dispatch_wave_script INDEX_VAR NAME CASES: the job script of a wave: task INDEX_VAR's
# arguments, then run-job's own text. dispatch_wave_script_into sets wave_script to it without
# starting a program.
dispatch_wave_script_into() {
  local body lines=()
  mapfile -t lines <"$here/run-job" || dispatch_usage "cannot read $here/run-job"
  printf -v body '%s\n' "${lines[@]:1}"
  printf -v wave_script '%s\n' '#!/usr/bin/env bash' "# yolo: $2" "case \${$1:-none} in"
  wave_script+=$3
  wave_script+="  *) echo \"run-job: ✗ no task \${$1:-none} in this wave\" >&2; exit 1 ;;"$'\n'"esac"$'\n'
  wave_script+=$body
}
dispatch_wave_script() {
  dispatch_wave_script_into "$@"
  printf '%s' "$wave_script"
}

# Between two polls of the engine a waiting adapter naps without starting a program, and reads
# the logs of its running jobs that are readable here (a one-node cluster, a shared file
# system) as they grow: a log whose job wrote run-job's last line (`run-job: ✓ ...` or
# `run-job: ✗ ...`) ends the nap, so the poll that sees the job ended comes as it ends, not at
# the next interval. A log that does not exist yet (a job still pending) is looked for on each
# slice of the nap and followed once it appears. These early polls are rationed (at least 0.05
# s after the last poll, a bucket of two refilled at one a second, three per job), so the
# engine's load stays a few calls a second; at most YOLO_DISPATCH_FOLLOW_MAX (16) logs are
# followed or looked for at once.
# Needs bash 5 ($EPOCHREALTIME): older shells nap the whole interval.
declare -A dispatch_log_fd=() dispatch_log_part=() dispatch_log_end=() dispatch_log_want=()
dispatch_nap_fd= dispatch_tokens=2000 dispatch_tokens_at=
dispatch_clock() { local t=${EPOCHREALTIME:-}; t=${t/[.,]/}; dispatch_ms=$((${t:-0} / 1000)); }
# dispatch_follow_log KEY FILE: follows FILE for KEY (a job, a task) from its start; a FILE
# that does not exist yet is looked for until it does.
dispatch_follow_log() {
  [ -n "${EPOCHREALTIME:-}" ] && [ -n "$2" ] || return 0
  [ -z "${dispatch_log_fd[$1]:-}" ] && [ -z "${dispatch_log_end[$1]:-}" ] || return 0
  if [ -z "${dispatch_log_want[$1]:-}" ] &&
    [ $((${#dispatch_log_fd[@]} + ${#dispatch_log_want[@]})) -ge "${YOLO_DISPATCH_FOLLOW_MAX:-16}" ]; then
    return 0
  fi
  local fd
  if [ -f "$2" ] && { exec {fd}<"$2"; } 2>/dev/null; then
    unset "dispatch_log_want[$1]"
    dispatch_log_fd[$1]=$fd dispatch_log_part[$1]=
  else
    dispatch_log_want[$1]=$2
  fi
}
# dispatch_unfollow_log KEY: KEY's job has been reported; its log is followed no longer.
dispatch_unfollow_log() {
  local fd=${dispatch_log_fd[$1]:-}
  [ -z "$fd" ] || exec {fd}<&-
  unset "dispatch_log_fd[$1]" "dispatch_log_part[$1]" "dispatch_log_end[$1]" "dispatch_log_want[$1]"
}
# dispatch_read_logs: reads what the followed logs got since the last call; a log with its
# job's last line is read no more, and its job counts as ending (dispatch_log_end).
dispatch_read_logs() {
  local k line fd
  for k in "${!dispatch_log_want[@]}"; do
    [ ! -f "${dispatch_log_want[$k]}" ] || dispatch_follow_log "$k" "${dispatch_log_want[$k]}"
  done
  for k in "${!dispatch_log_fd[@]}"; do
    while :; do
      if IFS= read -r -u "${dispatch_log_fd[$k]}" line; then
        line=${dispatch_log_part[$k]}$line dispatch_log_part[$k]=
        case $line in
          'run-job: ✓'* | 'run-job: ✗'*)
            fd=${dispatch_log_fd[$k]}
            exec {fd}<&-
            unset "dispatch_log_fd[$k]" "dispatch_log_part[$k]"
            dispatch_log_end[$k]=3
            break ;;
        esac
      else
        # A line not finished yet: kept until its end comes (read consumed it).
        line=${dispatch_log_part[$k]}$line
        [ "${#line}" -le 4096 ] || line=${line:${#line}-4096}
        dispatch_log_part[$k]=$line
        break
      fi
    done
  done
}
# dispatch_nap MS: sleeps MS milliseconds, 1; returns 0 earlier when a job is ending and an
# early poll is allowed (then the caller polls at once).
dispatch_nap() {
  local ms=$1 s start k
  [ -n "$dispatch_nap_fd" ] || exec {dispatch_nap_fd}<> <(:)
  if [ -z "${EPOCHREALTIME:-}" ] ||
    [ $((${#dispatch_log_fd[@]} + ${#dispatch_log_end[@]} + ${#dispatch_log_want[@]})) -eq 0 ]; then
    printf -v s '%d.%03d' $((ms / 1000)) $((ms % 1000))
    read -r -t "$s" -u "$dispatch_nap_fd" _
    return 1
  fi
  dispatch_clock
  start=$dispatch_ms
  while :; do
    dispatch_read_logs
    dispatch_clock
    # One early poll a second on average (a bucket of two, refilled at one a second).
    dispatch_tokens=$((dispatch_tokens + dispatch_ms - ${dispatch_tokens_at:-$dispatch_ms}))
    [ "$dispatch_tokens" -le 2000 ] || dispatch_tokens=2000
    dispatch_tokens_at=$dispatch_ms
    if [ "${#dispatch_log_end[@]}" -gt 0 ] && [ $((dispatch_ms - start)) -ge 50 ] && [ "$dispatch_tokens" -ge 1000 ]; then
      for k in "${!dispatch_log_end[@]}"; do
        dispatch_log_end[$k]=$((dispatch_log_end[$k] - 1))
        [ "${dispatch_log_end[$k]}" -gt 0 ] || unset "dispatch_log_end[$k]"
      done
      dispatch_tokens=$((dispatch_tokens - 1000))
      # The job wrote its last line: a moment for it to exit and the engine to hear of it.
      read -r -t 0.02 -u "$dispatch_nap_fd" _
      return 0
    fi
    [ $((dispatch_ms - start)) -lt "$ms" ] || return 1
    s=$((ms - (dispatch_ms - start)))
    [ "$s" -le 25 ] || s=25
    printf -v s '0.%03d' "$s"
    read -r -t "$s" -u "$dispatch_nap_fd" _
  done
}
# dispatch_poll_ms SECONDS: a poll interval given in seconds (2, 0.5) in milliseconds.
dispatch_poll_ms() {
  local whole=${1%%.*} frac=
  [[ $1 == *.* ]] && frac=${1#*.}
  frac=${frac}000 frac=${frac:0:3}
  case $whole$frac in "" | *[!0-9]*) echo 2000; return ;; esac
  echo $((10#${whole:-0} * 1000 + 10#$frac))
}

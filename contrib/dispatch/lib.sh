# Shared by the dispatch adapters (sourced, not run): the submit options of the contract, the
# deterministic job name, the JSON handle, --dry-run printing. See docs/dispatch.md.
# shellcheck shell=bash

# The submit options every adapter takes (placeholders of the dispatch config):
#   --plan-id {plan_id} --correlation-id {correlation_id} --attempt {attempt}
#   --base-commit {base_commit} --branch {branch} --remote {remote} [--plan-path {plan_path}]
#   [--summary-path {summary_path}]   committed by the job when the executor left it uncommitted
#   -- EXECUTOR ARG...      the executor's argv, run in the job's clone
plan_id= corr= attempt= base= branch= remote= plan_path= summary_path= dry_run=0
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

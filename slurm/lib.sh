# Shared run-time logic of the kevolve batch scripts (sourced, bash).
# kv_setup CONFIG [STORE]   site settings, modules, the store path, resume or not
# kv_launch CMD...          runs CMD in the background, forwards USR1/TERM to it, waits
# kv_finish RC              requeues after the time-limit signal, prints how to resume

kv_log() { echo "[kevolve-slurm $(date +%T)] $*"; }

kv_setup() {
  KV_CONFIG=${1:?usage: sbatch $0 CONFIG [STORE]}
  # shellcheck source=site.conf
  source "${KEVOLVE_SITE_CONF:-$KEVOLVE_SLURM_DIR/site.conf}" || { echo "cannot read the site config" >&2; exit 2; }
  export KEVOLVE_HOME KEVOLVE_CACHE_DIR
  if [ -n "$KEVOLVE_MODULES" ] && command -v module >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    module load $KEVOLVE_MODULES
  fi
  [ -f "$KV_CONFIG" ] || { echo "error: $KV_CONFIG: no such sweep file" >&2; exit 2; }
  [ -x "$KEVOLVE_BIN" ] || { echo "error: $KEVOLVE_BIN: not an executable (set KEVOLVE_BIN in the site config)" >&2; exit 2; }
  KV_STORE=${2:-$KEVOLVE_STORE_DIR/$(basename "${KV_CONFIG%.*}").h5}
  mkdir -p "$(dirname "$KV_STORE")"
  # A new job, a requeued one or a new submission with the same store: the
  # store decides. It is always a complete checkpoint (written to a temporary
  # file and renamed), so its existence means there is something to resume.
  if [ -e "$KV_STORE" ]; then KV_RUN=(run "$KV_CONFIG" --resume "$KV_STORE"); else KV_RUN=(run "$KV_CONFIG" --store "$KV_STORE"); fi
  # HDF5 file locking fails on some parallel file systems (Lustre, NFS).
  export HDF5_USE_FILE_LOCKING=${HDF5_USE_FILE_LOCKING:-FALSE}
  # mpirun kills its ranks this long after forwarding SIGTERM: leave rank 0 time to checkpoint.
  export OMPI_MCA_odls_base_sigkill_timeout=${OMPI_MCA_odls_base_sigkill_timeout:-30}
  if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
  kv_log "job ${SLURM_JOB_ID:-?}${SLURM_ARRAY_TASK_ID:+ (array task $SLURM_ARRAY_TASK_ID)} restart ${SLURM_RESTART_COUNT:-0} on ${SLURM_JOB_NODELIST:-?}: ${KV_RUN[*]}"
}

KV_SIGNAL=""
KV_PID=""
KV_RC=0
kv_forward() {  # the signal's name
  KV_SIGNAL=$1
  kv_log "got SIG$1: rank 0 writes its final checkpoint and stops the ranks"
  [ -n "$KV_PID" ] && kill -s "$1" "$KV_PID" 2>/dev/null
}

kv_launch() {
  trap 'kv_forward USR1' USR1
  trap 'kv_forward TERM' TERM
  trap 'kv_forward INT' INT
  "$@" &
  KV_PID=$!
  # bash runs traps only between commands: wait in the background job's stead,
  # and again after each trap until the launcher has exited.
  while kill -0 "$KV_PID" 2>/dev/null; do wait "$KV_PID"; done
  wait "$KV_PID"
  KV_RC=$?
  trap - USR1 TERM INT
  return 0
}

kv_finish() {
  local rc=${1:-$KV_RC}
  if [ "$rc" = 0 ]; then
    kv_log "sweep finished: $KV_STORE"
    "$KEVOLVE_BIN" status "$KV_STORE" | tail -n 3
    exit 0
  fi
  kv_log "launcher exited with $rc; the store holds the last checkpoint: $KEVOLVE_BIN status $KV_STORE"
  if [ "$KV_SIGNAL" = USR1 ] && [ "${KEVOLVE_REQUEUE_AT_LIMIT:-0}" = 1 ] && [ -n "${SLURM_JOB_ID:-}" ]; then
    local id=$SLURM_JOB_ID
    [ -n "${SLURM_ARRAY_JOB_ID:-}" ] && id=${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}
    kv_log "time limit near: requeueing job $id, which resumes from $KV_STORE"
    scontrol requeue "$id" && exit 0
  fi
  exit "$rc"
}

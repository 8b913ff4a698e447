#!/usr/bin/env bash
# Run one hpcswarm job file under SLURM; by default the PSO-LSRG unbiased experiment
# (Tran et al. 2016, Experiment II, SRBCT: 40 runs x 10 outer folds = 400 independent tasks).
#
#   sbatch slurm/run_lsrg.sh                                  # jobs/pso-lsrg-srbct-unbiased.toml
#   sbatch slurm/run_lsrg.sh jobs/cso-colon-holdout.toml      # another job file
#   sbatch slurm/run_lsrg.sh --set runs=10                    # extra arguments go to 'hpcswarm run'
#   sbatch --ntasks=80 --time=01:00:00 slurm/run_lsrg.sh      # sbatch options beat the lines below
#
# Submit from the repository root: job files, ./.venv and the results are found relative to the
# submit directory (the results file is the job's 'output', default <job stem>.h5, written there).
#
# Environment (export before sbatch; sbatch passes the environment to the job by default):
#   HPCSWARM_JOB            job file when no first argument is given
#                           (default jobs/pso-lsrg-srbct-unbiased.toml)
#   HPCSWARM_VENV           virtualenv to activate; unset: ./.venv if it exists; empty: none
#                           (use the python already on PATH, e.g. from 'module load')
#   HPCSWARM_PYTHON         python command (default python)
#   HPCSWARM_LAUNCHER       srun (default) | mpirun | mpiexec, as your site recommends for MPI;
#                           srun gets the --mpi plugin of the MPI library mpi4py uses (pmi2 for
#                           MPICH, Intel MPI, MVAPICH; pmix for Open MPI; cray_shasta for Cray
#                           MPICH), if srun --mpi=list offers it (the log names the choice)
#   HPCSWARM_LAUNCHER_ARGS  extra launcher options, split on spaces, e.g. "--mpi=pmix" (a --mpi
#                           here replaces the automatic choice)
#   HPCSWARM_NTASKS         MPI ranks (default $SLURM_NTASKS, else 1)
#   HPCSWARM_FORWARD_SIGNAL 0: log the time-limit warning without passing it on (default 1)
#
# Resources: the tasks are independent (a task farm over rank groups), so the ranks may span
# several nodes; 400 tasks on 40 ranks is 10 tasks per rank. Each rank runs one BLAS thread by
# default, hence cpus-per-task=1. One full task (70 iterations, 9/10 of SRBCT) took 73-158 s on
# a laptop-class core shared with another job, so 10 tasks per rank should take well under an
# hour: the 2 h limit leaves room for slower cores. Check the first log and adjust.
#
#SBATCH --job-name=pso-lsrg-srbct
#SBATCH --ntasks=40
#SBATCH --cpus-per-task=1
#SBATCH --mem-per-cpu=1G
#SBATCH --time=02:00:00
#SBATCH --output=%x-%j.out
#SBATCH --error=%x-%j.err
#
# Time-limit warning: SLURM sends SIGUSR1 to this batch shell 300 s before the time limit.
# We use the "B:" form (the batch shell only) rather than the plain form (job steps only):
# the plain form reaches the ranks only when srun started them, not mpirun (whose ranks live in
# the batch step), and leaves no trace in the log. With "B:", the trap below writes a line in
# the log and forwards the signal to the launcher; srun, Open MPI's mpirun and MPICH's mpiexec
# all pass SIGUSR1 on to every rank. hpcswarm then finishes the round each search is in,
# writes its checkpoint (<output stem>.checkpoint.h5: finished tasks and every running swarm)
# and exits with status 3 well before the limit. SIGTERM (scancel, the time limit itself) and
# SIGINT are forwarded as SIGTERM and do the same. The run always has '--resume': submitting
# the same command again continues from the checkpoint (or starts afresh when there is
# none), with the same results as an uninterrupted run, on any number of ranks.
# HPCSWARM_FORWARD_SIGNAL=0 only logs the warning (the job then runs into its limit; the
# periodic checkpoints, every 'checkpoint_every' rounds, still hold most of the work).
#SBATCH --signal=B:USR1@300

set -euo pipefail

log() { printf 'hpcswarm-slurm: %s\n' "$*"; }
die() { printf 'hpcswarm-slurm: error: %s\n' "$*" >&2; exit 2; }

if [[ -n ${SLURM_SUBMIT_DIR:-} ]]; then
    cd "$SLURM_SUBMIT_DIR" || die "cannot enter the submit directory $SLURM_SUBMIT_DIR"
fi

# Job file: the first argument unless it is an option, else $HPCSWARM_JOB, else the default.
job=${HPCSWARM_JOB:-jobs/pso-lsrg-srbct-unbiased.toml}
if [[ $# -gt 0 && $1 != -* ]]; then
    job=$1
    shift
fi
if [[ ! -f $job ]]; then
    die "job file '$job' not found (in $PWD); give it as the first argument or set HPCSWARM_JOB"
fi

# Python environment.
venv=${HPCSWARM_VENV-.venv}
if [[ -n ${HPCSWARM_VENV-} ]] && [[ ! -f $venv/bin/activate ]]; then
    die "HPCSWARM_VENV=$venv: no virtualenv there ($venv/bin/activate is missing)"
fi
if [[ -n $venv && -f $venv/bin/activate ]]; then
    set +u  # activate scripts are not all written for 'set -u'
    # shellcheck source=/dev/null
    source "$venv/bin/activate"
    set -u
fi
python=${HPCSWARM_PYTHON:-python}
if ! command -v "$python" >/dev/null; then
    die "'$python' not found on PATH; set HPCSWARM_VENV or HPCSWARM_PYTHON"
fi

# BLAS/OpenMP threads per rank: the CPUs SLURM gave each task (outside SLURM, an OMP_NUM_THREADS
# you set, else 1). Passed as 'hpcswarm run --threads' too: hpcswarm's own default counts the
# CPUs a rank may run on, which under mpirun without binding is the whole job's CPU set on the
# node, and its thread-pool limit would override these variables.
threads=${SLURM_CPUS_PER_TASK:-${OMP_NUM_THREADS:-1}}
export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads MKL_NUM_THREADS=$threads

ntasks=${HPCSWARM_NTASKS:-${SLURM_NTASKS:-1}}
[[ $ntasks =~ ^[1-9][0-9]*$ ]] || die "number of ranks must be a positive integer, got '$ntasks'"
launcher=${HPCSWARM_LAUNCHER:-srun}
launcher_args=()
read -r -a launcher_args <<< "${HPCSWARM_LAUNCHER_ARGS:-}"
case $launcher in
    srun)
        # srun no longer inherits --cpus-per-task from sbatch on every SLURM version: pass it.
        launch=(srun --ntasks="$ntasks" --cpus-per-task="$threads" --kill-on-bad-exit=1)
        ;;
    mpirun | mpiexec)
        launch=("$launcher" -n "$ntasks")
        ;;
    *)
        die "HPCSWARM_LAUNCHER must be srun, mpirun or mpiexec, got '$launcher'"
        ;;
esac
if ! command -v "$launcher" >/dev/null; then
    die "launcher '$launcher' not found on PATH; set HPCSWARM_LAUNCHER (srun, mpirun or mpiexec)"
fi

# srun's --mpi plugin: the process-management interface of the MPI library mpi4py is linked
# to (without a common one srun starts N singleton worlds, which hpcswarm refuses with exit
# status 2). Probed once with the job's python, without starting MPI, and checked against the
# plugins this srun offers. HPCSWARM_LAUNCHER_ARGS with a --mpi=... of its own skips the choice.
mpi_probe='import mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI; '\
'print(" ".join(MPI.Get_library_version().splitlines()[0].split()))'
mpi_note=
if [[ $launcher == srun && " ${HPCSWARM_LAUNCHER_ARGS:-} " == *" --mpi"* ]]; then
    mpi_note="as HPCSWARM_LAUNCHER_ARGS says"
elif [[ $launcher == srun ]]; then
    library=$("$python" -c "$mpi_probe" 2>/dev/null) || library=
    case $library in
        *"Open MPI"*)                           wanted="pmix pmi2" ;;
        *"CRAY MPICH"*)                         wanted="cray_shasta pmi2" ;;
        *MPICH* | *"Intel(R) MPI"* | *MVAPICH*) wanted="pmi2" ;;
        *)                                      wanted= ;;
    esac
    # 'srun --mpi=list' prints one plugin per indented line
    offered=$(srun --mpi=list 2>&1 | sed -n 's/^[[:space:]]\{1,\}\([[:alnum:]_]\{1,\}\)$/\1/p' |
              tr '\n' ' ') || offered=
    plugin=
    for name in $wanted; do
        if [[ " $offered" == *" $name "* ]]; then
            plugin=$name
            break
        fi
    done
    if [[ -n $plugin ]]; then
        launch+=(--mpi="$plugin")
        mpi_note="--mpi=$plugin for $library (srun offers: ${offered% })"
    elif [[ -n $wanted ]]; then
        die "mpi4py uses $library, which srun starts with --mpi=${wanted// / or --mpi=}," \
            "but this srun offers: ${offered:-nothing (srun --mpi=list failed)}; set" \
            "HPCSWARM_LAUNCHER=mpiexec (or mpirun) to use the library's own launcher, or" \
            "HPCSWARM_LAUNCHER_ARGS=--mpi=PLUGIN"
    else
        mpi_note="srun's default (MpiDefault), for an MPI library not known here:"
        mpi_note+=" ${library:-$python could not import mpi4py}"
    fi
fi
# (the ${a[@]+"${a[@]}"} form keeps an empty array legal under 'set -u' in bash < 4.4)
cmd=("${launch[@]}" ${launcher_args[@]+"${launcher_args[@]}"}
     "$python" -m hpcswarm run "$job" --resume --threads "$threads" "$@")

now() { date -u '+%Y-%m-%d %H:%M:%S UTC'; }
log "job ${SLURM_JOB_ID:-(not under SLURM)}${SLURM_JOB_NAME:+ $SLURM_JOB_NAME}" \
    "on ${SLURM_JOB_NODELIST:-$(hostname)}, started $(now)"
log "directory $PWD; python $(command -v "$python"); $ntasks rank(s) x $threads thread(s)"
[[ -z $mpi_note ]] || log "srun MPI plugin: $mpi_note"
log "running: $(printf '%q ' "${cmd[@]}")"

# The launcher runs in the background so that this shell can react to signals while it waits.
child=
# shellcheck disable=SC2329  # called by the traps below
on_signal() {
    local sig=$1
    if [[ $sig == USR1 ]]; then
        log "SIGUSR1 at $(now): the job's time limit is near"
        if [[ ${HPCSWARM_FORWARD_SIGNAL:-1} == 0 ]]; then
            return 0
        fi
    elif [[ $sig == INT ]]; then
        sig=TERM  # a background command of a script starts with SIGINT ignored
    fi
    if [[ -n $child ]]; then
        log "forwarding SIG$sig to $launcher (pid $child)"
        kill -s "$sig" "$child" 2>/dev/null || true
    fi
}
trap 'on_signal USR1' USR1
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT
"${cmd[@]}" &
child=$!

# 'wait' returns early (status > 128) when a trapped signal arrives: wait again until the
# launcher itself has ended, and exit with its status.
while :; do
    status=0
    wait "$child" || status=$?
    kill -0 "$child" 2>/dev/null || break
done
log "$launcher exited with status $status at $(now)"
if [[ $status == 3 ]]; then
    log "stopped early with a checkpoint; submit the same command again to continue"
fi
exit "$status"

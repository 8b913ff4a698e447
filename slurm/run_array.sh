#!/usr/bin/env bash
# Run several hpcswarm job files as one SLURM job array: array element i runs the i-th job
# (counting from 0) of a list, through slurm/run_lsrg.sh (same environment variables, same
# time-limit signal handling, same log lines).
#
#   bash slurm/run_array.sh --list            # the list with its indices, and the --array line
#   sbatch slurm/run_array.sh                 # every runnable jobs/*.toml, one element each
#   sbatch --array=0-8%3 slurm/run_array.sh   # at most 3 elements at a time
#   sbatch --array=2,5 slurm/run_array.sh --set runs=10   # extra arguments: 'hpcswarm run'
#   HPCSWARM_JOB_LIST=my-jobs.txt sbatch --array=0-3 slurm/run_array.sh
#
# The list: $HPCSWARM_JOB_LIST, a file with one job file per line (relative to the submit
# directory; blank lines and lines starting with # are skipped and do not count), or by default
# every jobs/*.toml that names its dataset (a 'data = ...' line before the first [table]), in
# sorted (C locale) order. A job that leaves the dataset to the user (pso-lsrg-experiment-ii.toml)
# is not in the default list: name it in a list file and pass '--set data=FILE' after the script,
# or run it with slurm/run_lsrg.sh. Set --array to 0-(N-1) for a list of N jobs,
# below or on the sbatch command line: 'bash slurm/run_array.sh --list' prints the right line.
# An index past the end of the list fails with an error naming the valid range.
#
# Submit from the repository root. Each element writes its job's 'output' (default
# <job stem>.h5) in the submit directory and its logs to <job name>-<array job id>_<index>.out/.err.
# Array elements run concurrently: give jobs that share an output name distinct outputs.
#
# The resources below apply to every element: size them for the longest job of the list.
#SBATCH --job-name=hpcswarm
#SBATCH --array=0-8
#SBATCH --ntasks=10
#SBATCH --cpus-per-task=1
#SBATCH --mem-per-cpu=1G
#SBATCH --time=12:00:00
#SBATCH --output=%x-%A_%a.out
#SBATCH --error=%x-%A_%a.err
# SIGUSR1 to the batch shell 300 s before the time limit; see the comment in run_lsrg.sh.
#SBATCH --signal=B:USR1@300

set -euo pipefail

die() { printf 'hpcswarm-slurm: error: %s\n' "$*" >&2; exit 2; }

# Under sbatch this file is a copy in SLURM's spool folder: find run_lsrg.sh beside the original
# when run by hand, else in slurm/ of the submit directory.
here=$(dirname -- "${BASH_SOURCE[0]}")
runner=$here/run_lsrg.sh
if [[ -n ${SLURM_SUBMIT_DIR:-} ]]; then
    [[ $runner == /* ]] || runner=$PWD/$runner
    cd "$SLURM_SUBMIT_DIR" || die "cannot enter the submit directory $SLURM_SUBMIT_DIR"
fi
[[ -f $runner ]] || runner=slurm/run_lsrg.sh
if [[ ! -f $runner ]]; then
    die "slurm/run_lsrg.sh not found in $PWD: submit from the repository root"
fi

jobs=()
if [[ -n ${HPCSWARM_JOB_LIST:-} ]]; then
    list=$HPCSWARM_JOB_LIST
    [[ -f $list ]] || die "HPCSWARM_JOB_LIST=$list: no such file (in $PWD)"
    while IFS= read -r line || [[ -n $line ]]; do
        line=${line#"${line%%[![:space:]]*}"}    # strip leading and trailing blanks
        line=${line%"${line##*[![:space:]]}"}
        [[ -z $line || $line == \#* ]] && continue
        jobs+=("$line")
    done < "$list"
else
    list="jobs/*.toml naming their data"
    names_data() {    # a top-level 'data = ...' key: before the first [table] header
        awk '/^[[:space:]]*\[/ { exit } /^[[:space:]]*data[[:space:]]*=/ { found = 1; exit }
             END { exit !found }' "$1"
    }
    mapfile -t jobs < <(shopt -s nullglob
                        for f in jobs/*.toml; do names_data "$f" && printf '%s\n' "$f"; done |
                        LC_ALL=C sort)
fi
[[ ${#jobs[@]} -gt 0 ]] || die "the job list ($list) is empty"
last=$((${#jobs[@]} - 1))

if [[ ${1:-} == --list ]]; then
    for i in "${!jobs[@]}"; do
        printf '%3d  %s\n' "$i" "${jobs[i]}"
    done
    printf '#SBATCH --array=0-%d\n' "$last"
    exit 0
fi

index=${SLURM_ARRAY_TASK_ID:-}
if [[ -z $index ]]; then
    die "SLURM_ARRAY_TASK_ID is not set: submit as an array job" \
        "(sbatch --array=0-$last slurm/run_array.sh)"
fi
[[ $index =~ ^[0-9]+$ ]] || die "SLURM_ARRAY_TASK_ID='$index' is not a non-negative integer"
if (( 10#$index > last )); then
    die "array index $index is out of range: the job list ($list) has ${#jobs[@]} entries," \
        "indices 0-$last; submit with --array=0-$last ('bash slurm/run_array.sh --list' shows them)"
fi
job=${jobs[10#$index]}
printf 'hpcswarm-slurm: array index %s of 0-%s: %s\n' "$index" "$last" "$job"
exec bash "$runner" "$job" "$@"

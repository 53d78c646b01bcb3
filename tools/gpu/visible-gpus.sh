# Sourced by the tools/gpu scripts: sets `gpus` to the GPUs a run sees, CUDA_VISIBLE_DEVICES's
# entries when it is set (as the launcher counts them), else every GPU nvidia-smi lists.
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
    gpus=$(tr ',' '\n' <<< "$CUDA_VISIBLE_DEVICES" | grep -c .)
else
    gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
fi

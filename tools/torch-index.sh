#!/bin/sh
# Prints the pip options that choose which build of torch `make` installs.
#   TORCH_INDEX=cpu (the default): on Linux, PyTorch's CPU-only index, a few hundred MB instead
#     of several GB of CUDA libraries. Where that index cannot be reached within a few seconds,
#     nothing is printed and pip takes torch from the default index.
#   TORCH_INDEX=default: the default index (on Linux, the CUDA build).
CPU_INDEX=https://download.pytorch.org/whl/cpu
case "${1:-cpu}" in
    default) exit 0 ;;
    cpu) ;;
    *) echo "TORCH_INDEX must be 'cpu' or 'default', not '$1'" >&2; exit 2 ;;
esac
[ "$(uname -s)" = Linux ] || exit 0   # macOS and Windows wheels on the default index are CPU builds
if python3 -c "import urllib.request; urllib.request.urlopen('$CPU_INDEX/torch/', timeout=5)" 2>/dev/null; then
    echo "--extra-index-url $CPU_INDEX"
else
    echo "==> PyTorch's CPU index cannot be reached: torch comes from the default index" >&2
fi

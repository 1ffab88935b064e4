#!/bin/sh
# Runs a container's command with the container's paths, as the local node's pods see them (hack/README.md).
# Started in a mount namespace of its own (unshare --mount, or --user --map-root-user --mount without root):
#
#   enter-pod.sh STATE [--bind SRC DEST | --ro-bind SRC DEST]... [--keep PATH]... [--chdir DIR] -- COMMAND [ARG]...
#
# STATE is an empty directory of the host. A tmpfs there holds a new root: each entry of the host's / bound into it,
# a /dev of its own (the usual devices, and /dev/termination-log when it is bound), and each --bind at its DEST. A
# DEST under a directory of the host (/etc/kubecrew) gets that directory overlaid first, so nothing is made on the host.
set -eu
state=$1
shift
mount -t tmpfs -o mode=755 kubecrew-pod "$state"
new=$state/root
mkdir "$new" "$state/layers"
# Each entry of the host's directory DIR at $new/DIR (a directory of ours): bound, or copied when a symlink.
mirror() {
  for entry in "${1%/}"/* "${1%/}"/.[!.]*; do
    [ -e "$entry" ] || [ -L "$entry" ] || continue
    if [ "$entry" = /dev ] || [ "$entry" = "$state" ]; then
      continue
    elif [ -L "$entry" ]; then
      cp -P "$entry" "$new$entry"
    elif [ -d "$entry" ]; then
      mkdir "$new$entry"
      mount --rbind "$entry" "$new$entry"
    else
      touch "$new$entry"
      mount --bind "$entry" "$new$entry"
    fi
  done
}
mirror /
# The bind of the host's / brought this tmpfs along: the container does not see it.
umount -l "$new$state" 2>/dev/null || true

mkdir "$new/dev"
mount -t tmpfs -o mode=755 kubecrew-dev "$new/dev"
for device in null zero full random urandom tty ptmx; do
  [ -e "/dev/$device" ] || continue
  touch "$new/dev/$device"
  mount --bind "/dev/$device" "$new/dev/$device"
done
for dir in pts shm mqueue; do
  [ -d "/dev/$dir" ] || continue
  mkdir "$new/dev/$dir"
  mount --rbind "/dev/$dir" "$new/dev/$dir"
done
ln -s /proc/self/fd "$new/dev/fd"
ln -s /proc/self/fd/0 "$new/dev/stdin"
ln -s /proc/self/fd/1 "$new/dev/stdout"
ln -s /proc/self/fd/2 "$new/dev/stderr"

# Directories of the new root in which entries may be made: its own tmpfs ones and those overlaid here ($ours), and
# volumes bound here and directories made in them ($inside).
ours=" / /dev "
inside=" "
layers=0
writable() {
  case "$ours$inside" in *" $1 "*) return 0 ;; esac
  parent=$(dirname "$1")
  writable "$parent"
  case "$inside" in *" $parent "*)
    [ -d "$new$1" ] || mkdir "$new$1"
    inside="$inside$1 "
    return 0
    ;;
  esac
  if [ -e "$new$1" ]; then
    layers=$((layers + 1))
    mkdir "$state/layers/$layers" "$state/layers/$layers.work"
    if mount -t overlay overlay -o "lowerdir=$1,upperdir=$state/layers/$layers,workdir=$state/layers/$layers.work" \
      "$new$1" 2>/dev/null; then
      # An overlay shows the directory's own filesystem only: bind the host's mounts below it again (/etc/hosts, say).
      awk -v dir="$1/" 'index($5, dir) == 1 { print $5 }' /proc/self/mountinfo | while read -r below; do
        case "$below" in "$state"*) continue ;; esac
        mount --bind "$below" "$new$below" 2>/dev/null || true
      done
    else
      # No overlay here (in a user namespace, over a directory holding mounts it may not reveal): a tmpfs of bindings.
      mount -t tmpfs -o mode=755 kubecrew-dir "$new$1"
      mirror "$1"
    fi
  else
    mkdir "$new$1"
  fi
  ours="$ours$1 "
}

# SOURCE (of the host) at DEST (of the container, its symlinks resolved in the new root: /var/run is /run).
bind() {
  dest=$(chroot "$new" realpath -m "$2")
  writable "$(dirname "$dest")"
  if [ -d "$1" ]; then
    [ -d "$new$dest" ] || mkdir "$new$dest"
    inside="$inside$dest "
  else
    [ -e "$new$dest" ] || touch "$new$dest"
  fi
  mount --rbind "$1" "$new$dest"
}

chdir=/
while [ $# -gt 0 ]; do
  case "$1" in
    --bind | --ro-bind)
      bind "$2" "$3"
      [ "$1" = --bind ] || mount -o remount,bind,ro "$new$dest"
      shift 3
      ;;
    --keep)
      # A path of the node's own (this checkout, its state) that a volume hid (an emptyDir at /tmp): seen again.
      bind "$2" "$2"
      shift 2
      ;;
    --chdir)
      chdir=$2
      shift 2
      ;;
    --)
      shift
      break
      ;;
    *)
      echo "enter-pod.sh: unknown option $1" >&2
      exit 127
      ;;
  esac
done
writable "$chdir"
exec chroot "$new" /bin/sh -c 'cd "$0" && exec "$@"' "$chdir" "$@"

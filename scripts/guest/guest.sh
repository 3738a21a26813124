#!/bin/bash
# guest.sh: the project's test guest. Boots Debian under qemu, with systemd
# as init and nothing but cgroup v2 mounted, runs one command in it, and
# throws the guest away.
#
#   guest.sh [--release R] build    make R's cached image (only if missing
#                                   or out of date)
#   guest.sh [--release R] check    can this host run R's guest? exit 0, or
#                                   name what is missing and exit 3
#   guest.sh [--release R] run [--user NAME] [--share DIR]... [--timeout SECS]
#                [--mem MIB] -- COMMAND [ARGS...]
#
#   --release R    bookworm (Debian 12: kernel 6.1, systemd 252; the default)
#                  or trixie (Debian 13: kernel 6.12, systemd 257, Landlock
#                  ABI 6). Each has an image of its own.
#
# "run" boots a fresh qcow2 overlay on top of the cached image. The current
# directory appears in the guest at its own path (9p, read-write), as does
# each --share DIR. COMMAND starts there with stdin on /dev/null; its stdout
# and stderr arrive on ours, apart and unaltered, and its status is ours.
#   (no --user)    root, HOME=/root, inside a plain system service:
#                  system.slice/guest-run.service, not delegated
#   --user NAME    NAME, logged in through runuser -l: pam_systemd puts it in
#                  a logind session (session-cN.scope); NAME lingers, so
#                  user@UID.service is running. The image has "user" (uid
#                  1000); other names get an account at boot. Every guest
#                  account may sudo without a password.
#   --share DIR    one more directory to share (repeat as needed)
#   --timeout SECS stop the guest after SECS seconds, boot included; 900
#   --mem MIB      guest RAM, 1024 by default (vCPUs: host CPUs, at most 4)
#
# Environment:
#   MCPSANDBOX_GUEST_RELEASE   the release when there is no --release
#   MCPSANDBOX_GUEST_CACHE     where the images live, one directory per
#                              release (default:
#                              ${XDG_CACHE_HOME:-~/.cache}/mcpsandbox-guest)
#   MCPSANDBOX_GUEST_MIRROR, MCPSANDBOX_GUEST_SECURITY_MIRROR
#                              Debian mirrors; default: what the host's apt
#                              uses (for the release, else for its own one)
#   MCPSANDBOX_GUEST_EXTRA_PACKAGES  comma list of packages to add to the image
#   MCPSANDBOX_GUEST_ACCEL     kvm|tcg; kvm is picked only if /dev/kvm is
#                              writable and the CPU has vmx or svm
#   MCPSANDBOX_GUEST_TIMING=1  report boot and command times on stderr
#   MCPSANDBOX_GUEST_CONSOLE=1 dump the guest's serial console when done
#
# Exit codes:
#   N     whatever COMMAND exited with
#   124   --timeout expired
#   125   no image (build failed), no boot, or the guest failed before
#         COMMAND started; the end of the serial console goes to stderr
#   3     (check) a needed tool is missing
#   2     bad usage
# Only building the image needs root.
# shellcheck disable=SC2054,SC2317,SC2012,SC2015
# (SC2054: commas are qemu's option syntax; SC2317: on_exit runs from a trap;
# SC2012: kernel and module names are plain; SC2015: `a && b || fail` is meant.)
set -u -o pipefail
shopt -s nullglob

prog=guest.sh
say() { printf '%s: %s\n' "$prog" "$*" >&2; }
fail() { say "$*"; exit 125; }
usage() { awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"; }

CACHE_ROOT=${MCPSANDBOX_GUEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpsandbox-guest}
# set by select_release: the suite and its image's directory
SUITE="" CACHE=""
# TCG's threading for the release's guest (multi: one host thread per vCPU)
TCG_THREAD=multi
PKGS=systemd,systemd-sysv,dbus,dbus-user-session,libpam-systemd,libseccomp2,iproute2
PKGS+=,linux-image-amd64,kmod,udev,procps,util-linux,psmisc,busybox-static,cpio
# (Node.js comes from the host at run time, the version its tests use.)
PKGS+=,ca-certificates,bubblewrap,attr,sudo
[[ -n ${MCPSANDBOX_GUEST_EXTRA_PACKAGES:-} ]] && PKGS+=,$MCPSANDBOX_GUEST_EXTRA_PACKAGES

# ------------------------------------------------------------------ host side

# select_release NAME: the release every later step works on.
select_release() {
  # Both kernels enable Landlock unasked (their CONFIG_LSM lists it): no lsm= needed.
  case $1 in
    bookworm) ;;
    # its kernel is zstd-packed: the image's zstd unpacks it (img_kernel)
    # Its kernel (6.12) live-patches its own code (static keys) often
    # enough that multi-threaded TCG runs a half-patched jump now and then
    # (seen twice: a kernel oops at a jump's second byte, then a panic).
    # Single-threaded TCG keeps its two vCPUs, run in turn, and is exact.
    trixie) PKGS+=,zstd,apparmor TCG_THREAD=single ;;
    *) say "unknown release: $1 (bookworm or trixie)"; exit 2 ;;
  esac
  SUITE=$1
  CACHE=$CACHE_ROOT/$SUITE
}

missing_tools() { # prints the Debian packages that provide absent tools
  local t p
  for t in qemu-system-x86_64:qemu-system-x86 qemu-img:qemu-utils \
           mmdebstrap:mmdebstrap mke2fs:e2fsprogs xz:xz-utils flock:util-linux; do
    p=${t#*:}
    command -v "${t%%:*}" >/dev/null 2>&1 || printf '%s\n' "$p"
  done
}

# have_archive_key: the host's apt (which mmdebstrap uses) has the key that
# signs $SUITE, as debian-archive-keyring installs it
have_archive_key() {
  local f
  for f in /etc/apt/trusted.gpg.d/debian-archive-"$SUITE"-stable.{asc,gpg} \
           /usr/share/keyrings/debian-archive-"$SUITE"-stable.gpg; do
    [[ -r $f ]] && return 0
  done
  return 1
}

cmd_check() {
  local miss
  miss=$(missing_tools | sort -u | tr "\n" " " | sed "s/ $//")
  if [[ -n $miss ]]; then
    say "cannot run guests here; missing: $miss"
    say "fix: apt-get install --no-install-recommends $miss"
    exit 3
  fi
  if ! image_current && ! have_archive_key; then
    say "cannot build the $SUITE guest here: the host's apt has no Debian $SUITE archive key"
    say "fix: install a debian-archive-keyring that has it (for trixie: 2023.3 or later)"
    exit 3
  fi
  [[ -r /usr/share/qemu/qboot.rom ]] || say "note: no qboot.rom, booting with the default firmware (slower)"
  exit 0
}

# apt_mirror SUITE: the first URI the host's apt uses for SUITE (deb822 or
# one-line sources).
apt_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    awk -v want="$1" '
      function flush() { if (uri != "" && hit) print uri; uri = ""; hit = 0 }
      /^[ \t]*$/ { flush(); next }
      tolower($1) == "uris:"   { uri = $2 }
      tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == want) hit = 1 }
      END { flush() }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -r $f ]] || continue
    # deb [opts] URI SUITE COMPONENTS...
    sed -E 's/\[[^]]*\]//' "$f" | awk -v want="$1" '$1 == "deb" && $3 == want { print $2 }'
  done
} 2>/dev/null

# ------------------------------------------------------------------ the image
# Everything from here to recipe_hash defines the image. The bodies of these
# functions (bash drops the comments) and the package list are hashed: change
# them and the next build or run makes a new image.

# Guest side, /usr/local/libexec/guest-agent: started once per boot by
# guest-run.service. Reads the request from the read-only 9p share "ctl",
# mounts the shares, runs the command, reports on the "guest.events" port,
# then powers off at once.
img_agent() { cat <<'EOF'
#!/bin/bash
set -u
CTL=/run/guest-ctl
note() { printf 'guest-agent: %s\n' "$*"; }   # to the journal and the console
event() { [[ -e /dev/fd/7 ]] && printf '%s\n' "$*" >&7; }
off() { # immediate power-off: the disk is thrown away, the shares are synced
  sync
  systemctl poweroff -ff || echo o >/proc/sysrq-trigger
  exec sleep infinity
}
abort() { note "$*"; event "fail $*"; off; }

port() { # /dev node of the virtio-serial port named $1
  local d n
  for d in /sys/class/virtio-ports/vport*; do
    read -r n <"$d/name" 2>/dev/null && [[ $n == "$1" ]] && { echo "/dev/${d##*/}"; return 0; }
  done
  return 1
}
for _ in $(seq 100); do port guest.events >/dev/null && port guest.stderr >/dev/null && break; sleep 0.05; done
# A virtio port can be open only once, hence the relays below for the command.
exec 7>"$(port guest.events)" 5>"$(port guest.stdout)" 6>"$(port guest.stderr)" || abort "serial ports missing"
event agent

mkdir -p $CTL
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=none ctl $CTL || abort "cannot mount the control share"
read -r -d '' cwd <$CTL/cwd
read -r -d '' user <$CTL/user
mapfile -d '' -t shares <$CTL/shares
for i in "${!shares[@]}"; do
  mkdir -p -- "${shares[i]}" &&
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,cache=mmap "s$i" "${shares[i]}" ||
    abort "cannot mount ${shares[i]}"
done

# the system bus is up before any command runs
systemctl start dbus.service || abort "dbus did not start"

if [[ -n $user ]]; then
  if ! id -u -- "$user" >/dev/null 2>&1; then
    useradd -m -s /bin/bash -- "$user" || abort "cannot create user $user"
    printf '%s ALL=(ALL:ALL) NOPASSWD: ALL\n' "$user" >"/etc/sudoers.d/guest-$user"
  fi
  uid=$(id -u -- "$user")
  # Let the user reach the shares: open up their parents, but only those on
  # the guest's own disk (a chmod on a 9p parent would change the host).
  rootdev=$(stat -c %d /)
  for d in "${shares[@]}"; do
    while d=${d%/*}; [[ -n $d ]]; do
      [[ $(stat -c %d -- "$d") == "$rootdev" ]] && chmod o+x -- "$d"
    done
  done
  systemctl start systemd-logind.service systemd-user-sessions.service || abort "logind did not start"
  loginctl enable-linger "$user" || abort "enable-linger $user failed"
  # joins the start job logind queued for the lingering user, and waits for it
  systemctl start "user@$uid.service" || abort "user@$uid.service did not start"
  launch=(runuser -l "$user" -c /usr/local/libexec/guest-launch)
else
  launch=(env -u JOURNAL_STREAM -u TERM HOME=/root USER=root LOGNAME=root /usr/local/libexec/guest-launch)
fi

# Give the command pipes rather than the ports: a port admits one open at a
# time, so a command that reopens /dev/stdout would fail on it. One cat per
# stream forwards to its port.
exec {pout}> >(exec cat >&5 6>&- 7>&-)
cat_out=$!
exec {perr}> >(exec cat >&6 5>&- 7>&- {pout}>&-)
cat_err=$!
event ready
"${launch[@]}" </dev/null >&$pout 2>&$perr 5>&- 6>&- 7>&- {pout}>&- {perr}>&-
rc=$?
exec {pout}>&- {perr}>&-
# whatever the command left running may still hold the pipes: give it 2 s
for _ in $(seq 40); do
  kill -0 $cat_out 2>/dev/null || kill -0 $cat_err 2>/dev/null || break
  sleep 0.05
done
kill $cat_out $cat_err 2>/dev/null
event "exit $rc"
off
EOF
}

# Guest side, /usr/local/libexec/guest-launch: becomes the command. Run by the
# agent as root, or through runuser -l as the user.
img_launcher() { cat <<'EOF'
#!/bin/bash
mapfile -d '' -t argv </run/guest-ctl/argv
read -r -d '' dir </run/guest-ctl/cwd
cd -- "$dir" || { echo "guest-launch: cannot enter $dir" >&2; exit 125; }
exec -- "${argv[@]}"
EOF
}

img_unit() { cat <<'EOF'
[Unit]
Description=Command handed in by guest.sh
# the agent waits for dbus itself, after its mounts
Wants=dbus.service

[Service]
Type=exec
ExecStart=/usr/local/libexec/guest-agent
StandardInput=null
StandardOutput=journal+console
StandardError=inherit

[Install]
WantedBy=multi-user.target
EOF
}

# img_initrd ROOT OUT: our own initrd: static busybox plus just the modules
# for the root disk (virtio-pci, virtio-blk, ext4) and for the agent
# (virtio-serial, 9p). The generic initramfs-tools one, with udev, would cost
# several seconds more on each boot under TCG. Modules packed with xz (Debian
# 13's are) are unpacked here rather than by each boot.
img_initrd() {
  local root=$1 out=$2 kver tmp m b rc
  kver=$(basename "$(ls -d "$root"/lib/modules/* | sort -V | tail -n1)")
  # assembled inside the root, whose own cpio packs it (the host may lack one)
  tmp=$root/tmp/initrd
  rm -rf "$tmp"
  mkdir -p "$tmp"/{bin,dev,proc,sys,newroot,lib/modules}
  cp "$root/bin/busybox" "$tmp/bin/busybox"
  for m in virtio_pci virtio_blk ext4 virtio_console 9pnet_virtio 9p; do
    chroot "$root" modprobe -S "$kver" --show-depends "$m"
  done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' >"$tmp/mods"
  while read -r m; do
    b=${m##*/}
    case $b in
      *.ko.xz) b=${b%.xz}; xz -dc "$root$m" >"$tmp/lib/modules/$b" ;;
      *) cp "$root$m" "$tmp/lib/modules/" ;;
    esac && echo "$b" >>"$tmp/lib/modules/order" || return 1
  done <"$tmp/mods"
  rm "$tmp/mods"
  cat >"$tmp/init" <<'EOF'
#!/bin/busybox sh
bb=/bin/busybox
$bb mount -t proc none /proc
$bb mount -t sysfs none /sys
$bb mount -t devtmpfs none /dev
while read -r m; do $bb insmod "/lib/modules/$m"; done </lib/modules/order
n=0
until [ -b /dev/vda ] || [ $n -ge 300 ]; do $bb usleep 10000; n=$((n + 1)); done
# no journal in the image, and no lazy inode-table zeroing in the guest
$bb mount -t ext4 -o rw,noatime,noinit_itable /dev/vda /newroot || { echo "initrd: no root fs"; $bb poweroff -f; }
$bb umount /proc /sys
$bb mount --move /dev /newroot/dev
exec $bb switch_root /newroot /sbin/init
EOF
  chmod 755 "$tmp/init"
  chroot "$root" sh -c 'cd /tmp/initrd && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc' >"$out"
  rc=$?
  rm -rf "$tmp"
  return $rc
}

# img_kernel ROOT VMLINUZ OUT: unpack the kernel proper from the bzImage.
# qemu starts an ELF vmlinux at its PVH entry point, sparing the guest its own
# unpacking (several seconds under TCG). Offsets come from the setup header.
# The payload is xz (Debian 12; the host's xz) or zstd (Debian 13; the
# image's zstd), followed by 4 bytes of unpacked size.
img_kernel() {
  local root=$1 bz=$2 out=$3 sects off len
  u32() { od -An -t u4 -j "$1" -N 4 "$bz" | tr -d ' '; }
  payload() { tail -c +$((off + 1)) "$bz" | head -c "$((len - 4))"; }
  sects=$(od -An -t u1 -j $((0x1f1)) -N 1 "$bz" | tr -d ' ')
  ((sects == 0)) && sects=4
  off=$(( (sects + 1) * 512 + $(u32 $((0x248))) ))
  len=$(u32 $((0x24c)))
  case $(payload | head -c 4 | od -An -t x1 | tr -d ' ') in
    fd377a58) payload | xz -dcq --single-stream ;;
    28b52ffd) payload | chroot "$root" zstd -dcq ;;
    *) return 1 ;;
  esac >"$out" 2>/dev/null
  [[ $(head -c 4 "$out" | od -An -t x1 | tr -d ' ') == 7f454c46 ]]
}

# img_configure ROOT: everything that turns the bootstrap into a guest that
# boots fast under TCG.
img_configure() {
  local r=$1 u
  echo guest >"$r/etc/hostname"
  printf '127.0.0.1\tlocalhost\n127.0.1.1\tguest\n::1\tlocalhost ip6-localhost\n' >"$r/etc/hosts"
  : >"$r/etc/fstab"       # the initrd mounts / (rw); nothing else to mount
  # machine-id is set now, or every boot of an overlay would be a first boot
  rm -f "$r/etc/machine-id"; chroot "$r" systemd-machine-id-setup >/dev/null

  mkdir -p "$r/usr/local/libexec" "$r/etc/systemd/system/multi-user.target.wants" \
           "$r/etc/systemd/journald.conf.d" "$r/etc/systemd/system.conf.d" \
           "$r/etc/systemd/logind.conf.d" "$r/etc/udev/rules.d"
  img_agent >"$r/usr/local/libexec/guest-agent"
  img_launcher >"$r/usr/local/libexec/guest-launch"
  chmod 755 "$r/usr/local/libexec/guest-agent" "$r/usr/local/libexec/guest-launch"
  img_unit >"$r/etc/systemd/system/guest-run.service"
  ln -s ../guest-run.service "$r/etc/systemd/system/multi-user.target.wants/guest-run.service"

  printf '[Journal]\nStorage=volatile\nRuntimeMaxUse=32M\nForwardToConsole=no\n' \
    >"$r/etc/systemd/journald.conf.d/guest.conf"
  printf '[Manager]\nShowStatus=no\nDefaultTimeoutStartSec=90s\n' >"$r/etc/systemd/system.conf.d/guest.conf"
  printf '[Login]\nNAutoVTs=0\nReserveVT=0\n' >"$r/etc/systemd/logind.conf.d/guest.conf"

  # Under TCG a module load takes up to seconds (worst of all through
  # systemd-modules-load, measured: 6 s for the 9p set). The initrd brings
  # what the guest needs. Beyond that, udev's driver rule is switched off
  # (the emulated chipset needs none), and systemd's own early loads of
  # ip_tables and qemu_fw_cfg are refused. Explicit modprobe still works, as
  # does the kernel asking for a module when something needs one.
  ln -s /dev/null "$r/etc/udev/rules.d/80-drivers.rules"
  printf 'blacklist %s\n' ip_tables qemu_fw_cfg >"$r/etc/modprobe.d/guest.conf"
  # Each generator is a process exec, slow here; these have nothing to do
  # in this guest (no crypt/verity, no sysv scripts, no gettys, no resume).
  mkdir -p "$r/etc/systemd/system-generators" "$r/etc/systemd/user-generators"
  for u in cryptsetup getty gpt-auto hibernate-resume integritysetup rc-local run \
           ssh system-update sysv tpm2 veritysetup; do
    ln -s /dev/null "$r/etc/systemd/system-generators/systemd-$u-generator"
  done
  ln -s /dev/null "$r/etc/systemd/user-generators/systemd-xdg-autostart-generator"
  # Units that load modules, do first-boot or update work, or wait for
  # things this guest never has; plus gettys, timers and periodic jobs.
  # (systemd 254+'s tmpfiles-setup-dev-early makes the /dev nodes that need
  # no sysusers accounts before those exist; with sysusers masked,
  # tmpfiles-setup-dev alone makes them all, one exec sooner.)
  for u in modprobe@configfs modprobe@dm_mod modprobe@drm modprobe@efi_pstore \
           modprobe@fuse modprobe@loop sys-kernel-config.mount sys-fs-fuse-connections.mount \
           systemd-modules-load systemd-pstore systemd-random-seed systemd-journal-flush \
           systemd-hwdb-update ldconfig systemd-journal-catalog-update systemd-update-done \
           systemd-sysusers systemd-firstboot systemd-remount-fs systemd-udev-settle \
           systemd-timesyncd systemd-networkd-wait-online systemd-update-utmp systemd-update-utmp-runlevel \
           systemd-udev-load-credentials systemd-tmpfiles-setup-dev-early e2scrub_reap getty@tty1 serial-getty@ttyS0 getty.target \
           apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
           fstrim.timer systemd-tmpfiles-clean.timer; do
    [[ $u == *.* ]] || u=$u.service
    ln -sf /dev/null "$r/etc/systemd/system/$u"
  done
  rm -f "$r"/etc/systemd/system/timers.target.wants/* "$r"/etc/systemd/system/getty.target.wants/*

  chroot "$r" useradd -m -u 1000 -s /bin/bash user
  printf 'user ALL=(ALL:ALL) NOPASSWD: ALL\n' >"$r/etc/sudoers.d/guest-user"
  chmod 440 "$r/etc/sudoers.d/guest-user"

  rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* "$r"/boot/initrd.img-*
}

# img_build DIR MIRROR SECMIRROR: make DIR/{root.img,kernel,initrd}
img_build() {
  local d=$1 r=$1/root bz
  mkdir -p "$r"
  # no docs, and no initramfs-tools run (the kernel hook): we make our own initrd
  mmdebstrap --mode=root --variant=minbase --include="$PKGS" \
    --dpkgopt=force-unsafe-io \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --dpkgopt='path-exclude=/etc/kernel/postinst.d/initramfs-tools' \
    --aptopt='Acquire::Retries "3"' \
    "$SUITE" "$r" \
    "deb $2 $SUITE main" "deb $2 $SUITE-updates main" "deb $3 $SUITE-security main" \
    >"$d/mmdebstrap.log" 2>&1 || { tail -n 25 "$d/mmdebstrap.log" >&2; return 1; }
  img_configure "$r" >"$d/configure.log" 2>&1 || { tail -n 25 "$d/configure.log" >&2; return 1; }
  img_initrd "$r" "$d/initrd" || return 1
  bz=$(ls "$r"/boot/vmlinuz-* | sort -V | tail -n1)
  img_kernel "$r" "$bz" "$d/kernel" || { say "note: booting the bzImage (slower): cannot unpack $bz"; cp "$bz" "$d/kernel"; }
  # no journal (the overlay is thrown away anyway), nothing reserved
  mke2fs -q -t ext4 -O ^has_journal -m 0 -L guestroot -d "$r" "$d/root.img" 4G >"$d/mke2fs.log" 2>&1 \
    || { cat "$d/mke2fs.log" >&2; return 1; }
}

recipe_hash() {
  { declare -f img_agent img_launcher img_unit img_initrd img_kernel img_configure img_build
    printf '%s\n' "$SUITE" "$PKGS"; } | sha256sum | awk '{ print $1 }'
}

# ------------------------------------------------------------------ cache

image_current() {
  [[ -s $CACHE/root.img && -s $CACHE/kernel && -s $CACHE/initrd ]] &&
    [[ $(cat "$CACHE/recipe" 2>/dev/null) == "$(recipe_hash)" ]]
}

# ensure_image: leaves a shared lock on fd 8 (held until we exit), so no
# rebuild swaps the files while this run is starting its guest.
ensure_image() {
  local work t0 mirror secmirror
  if [[ ! -d $CACHE ]]; then mkdir -p "$CACHE" || fail "cannot create $CACHE"; fi
  # read-only is enough for flock, for users who may not write the cache
  [[ -e $CACHE/lock ]] || : 2>/dev/null >"$CACHE/lock"
  if [[ -w $CACHE/lock ]]; then exec 8>>"$CACHE/lock"; else exec 8<"$CACHE/lock"; fi ||
    fail "cannot open $CACHE/lock"
  flock -s 8
  image_current && return 0
  flock -x 8          # one builder; the others wait here, then find it done
  image_current && { flock -s 8; return 0; }

  [[ $(id -u) == 0 ]] || fail "the image in $CACHE must be (re)built, which needs root"
  [[ -z $(missing_tools) ]] || fail "missing host tools: $(missing_tools | tr '\n' ' ')(see: $0 check)"
  # A Debian mirror serves every release: where the host's apt lists none
  # for this one, the one for the host's own release does.
  local own
  own=$(sed -n "s/^VERSION_CODENAME=//p" /etc/os-release 2>/dev/null)
  mirror=${MCPSANDBOX_GUEST_MIRROR:-$({ apt_mirror "$SUITE"; [[ -n $own ]] && apt_mirror "$own"; } | head -n1)}
  secmirror=${MCPSANDBOX_GUEST_SECURITY_MIRROR:-$({ apt_mirror "$SUITE-security"
    [[ -n $own ]] && apt_mirror "$own-security"; } | head -n1)}
  [[ -n $mirror ]] || mirror=http://deb.debian.org/debian
  [[ -n $secmirror ]] || secmirror=http://deb.debian.org/debian-security
  say "building the $SUITE guest image in $CACHE from $mirror (a minute or two)"
  t0=$SECONDS
  rm -rf "$CACHE"/build.*     # left by an interrupted or failed build
  work=$(mktemp -d "$CACHE/build.XXXXXX") || fail "mktemp in $CACHE failed"
  if ! img_build "$work" "$mirror" "$secmirror"; then
    fail "image build failed; logs kept in $work"
  fi
  rm -f "$CACHE/recipe"
  mv -f "$work/root.img" "$work/kernel" "$work/initrd" "$CACHE/" || fail "cannot install the image"
  recipe_hash >"$CACHE/recipe"
  rm -rf "$work"
  say "image built in $((SECONDS - t0)) s"
  flock -s 8
}

# ------------------------------------------------------------------ run

# refuse to cover the guest's own system directories
check_share() {
  case $1 in
    /usr/local/?*) return 0 ;;
    / | /bin | /boot | /dev | /etc | /lib | /lib32 | /lib64 | /proc | /run | /sbin | /sys | /usr | /var | \
    /boot/* | /dev/* | /etc/* | /lib/* | /proc/* | /run/* | /sys/* | /usr/* | /var/lib | /var/lib/*)
      fail "will not share $1: the guest needs its own" ;;
  esac
}

cmd_run() {
  local user="" timeout=900 mem=1024 cpus extra=() d
  while (($#)); do
    case $1 in
      --user | --share | --timeout | --mem)
        (($# >= 2)) || { say "$1 needs a value"; exit 2; }
        set -- "$1=$2" "${@:3}" ;;
      --user=*) user=${1#*=}; shift ;;
      --share=*) extra+=("${1#*=}"); shift ;;
      --timeout=*) timeout=${1#*=}; shift ;;
      --mem=*) mem=${1#*=}; shift ;;
      --) shift; break ;;
      -h | --help) usage; exit 0 ;;
      *) say "unknown option: $1"; usage >&2; exit 2 ;;
    esac
  done
  (($#)) || { say "run: no command (put it after --)"; exit 2; }
  [[ $timeout =~ ^[1-9][0-9]*$ ]] || { say "bad --timeout: $timeout"; exit 2; }
  [[ $mem =~ ^[1-9][0-9]*$ ]] || { say "bad --mem: $mem"; exit 2; }
  [[ $user == root ]] && user=""
  [[ -z $user || $user =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] || { say "bad user name: $user"; exit 2; }
  cpus=$(nproc); ((cpus > 4)) && cpus=4

  # The shares: canonical paths, sorted so parents come first; a directory
  # inside one already shared needs no mount of its own.
  local cwd all=() shares=()
  cwd=$(pwd -P) || fail "cannot resolve the current directory"
  all=("$cwd")
  for d in "${extra[@]}"; do
    [[ -d $d ]] || fail "--share $d: not a directory"
    all+=("$(cd -- "$d" && pwd -P)")
  done
  for d in "${all[@]}"; do
    [[ $d != *$'\n'* ]] || fail "newline in a shared path"
    check_share "$d"
  done
  while IFS= read -r d; do
    local s covered=0
    for s in "${shares[@]}"; do [[ $d == "$s" || $d == "$s"/* ]] && covered=1; done
    ((covered)) || shares+=("$d")
  done < <(printf '%s\n' "${all[@]}" | LC_ALL=C sort -u)
  ((${#shares[@]} <= 20)) || fail "too many shared directories"

  command -v qemu-system-x86_64 >/dev/null && command -v qemu-img >/dev/null ||
    fail "qemu is missing (see: $0 check)"
  ensure_image

  local accel=${MCPSANDBOX_GUEST_ACCEL:-}
  if [[ -z $accel ]]; then
    accel=tcg
    # /dev/kvm alone is not enough: some hosts offer a KVM that cannot run a
    # stock kernel (e.g. kvm-pvm without hardware virtualization)
    [[ -w /dev/kvm ]] && grep -qwE 'vmx|svm' /proc/cpuinfo && accel=kvm
  fi
  local qaccel
  case $accel in
    kvm) qaccel=(-accel kvm -cpu host) ;;
    tcg) qaccel=(-accel "tcg,thread=$TCG_THREAD,tb-size=512" -cpu max) ;;
    *) fail "MCPSANDBOX_GUEST_ACCEL must be kvm or tcg" ;;
  esac

  # per-run state: the control share, the overlay, the console and events
  run=$(mktemp -d "${TMPDIR:-/tmp}/guest.XXXXXX") || fail "mktemp failed"
  trap 'on_exit' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  mkdir "$run/ctl"
  printf '%s\0' "$cwd" >"$run/ctl/cwd"
  printf '%s\0' "$user" >"$run/ctl/user"
  printf '%s\0' "${shares[@]}" >"$run/ctl/shares"
  printf '%s\0' "$@" >"$run/ctl/argv"
  chmod 755 "$run" "$run/ctl"; chmod 644 "$run"/ctl/*

  local model=none fsargs=() i
  q() { printf '%s' "${1//,/,,}"; }   # qemu option values escape commas by doubling
  [[ $(id -u) == 0 ]] && model=passthrough
  fsargs+=(-fsdev "local,id=ctl,path=$(q "$run/ctl"),security_model=$model,readonly=on"
           -device virtio-9p-pci,fsdev=ctl,mount_tag=ctl)
  for i in "${!shares[@]}"; do
    fsargs+=(-fsdev "local,id=s$i,path=$(q "${shares[i]}"),security_model=$model,multidevs=remap"
             -device "virtio-9p-pci,fsdev=s$i,mount_tag=s$i")
  done
  local bios=()
  [[ -r /usr/share/qemu/qboot.rom ]] && bios=(-bios /usr/share/qemu/qboot.rom)

  # boot: one guest on a fresh overlay of the image; sets qrc, t0 and t1
  # and leaves $run/events and $run/console.
  boot() {
    rm -f "$run/disk.qcow2" "$run/events" "$run/events.fifo" "$run/console"
    qemu-img create -q -f qcow2 -F raw -b "$CACHE/root.img" "$run/disk.qcow2" || fail "qemu-img create failed"
    # Events (agent up, command starting, exit status) are stamped with the
    # host's clock as they arrive.
    mkfifo "$run/events.fifo"
    while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done \
      <"$run/events.fifo" >"$run/events" &
    stamper=$!
    # qemu writes the command's output into pipes (it accepts them as fds
    # whatever our stdout/stderr are: tty, socket, file), cat passes it on.
    exec {qout}> >(exec cat)
    relay_out=$!
    exec {qerr}> >(exec cat >&2 {qout}>&-)
    relay_err=$!
    # our own writer on the fifo: the stamper sees EOF once we and qemu close it,
    # even if qemu never got as far as opening it
    exec {evw}<>"$run/events.fifo"

    t0=$EPOCHREALTIME
    timeout -k 5 "$timeout" qemu-system-x86_64 \
      -name guest.sh -M q35,sata=off,smbus=off,usb=off,vmport=off,i8042=off,graphics=off \
      "${qaccel[@]}" "${bios[@]}" -m "$mem" -smp "$cpus" \
      -nodefaults -no-user-config -display none -vga none -monitor none -no-reboot \
      -kernel "$CACHE/kernel" -initrd "$CACHE/initrd" \
      -append "console=ttyS0 quiet loglevel=4 panic=-1 systemd.unified_cgroup_hierarchy=1 cgroup_no_v1=all \
systemd.show_status=0 systemd.gpt_auto=0 mitigations=off tsc=reliable no_timer_check random.trust_cpu=on 8250.nr_uarts=1" \
      -drive "file=$(q "$run/disk.qcow2"),format=qcow2,if=virtio,cache=unsafe,discard=unmap" \
      -serial "file:$run/console" \
      -add-fd "fd=$qout,set=1" -add-fd "fd=$qerr,set=2" \
      -chardev file,id=cout,path=/dev/fdset/1,append=on \
      -chardev file,id=cerr,path=/dev/fdset/2,append=on \
      -chardev "file,id=cev,path=$(q "$run/events.fifo")" \
      -device virtio-serial-pci,id=vser \
      -device virtserialport,bus=vser.0,chardev=cout,name=guest.stdout \
      -device virtserialport,bus=vser.0,chardev=cerr,name=guest.stderr \
      -device virtserialport,bus=vser.0,chardev=cev,name=guest.events \
      "${fsargs[@]}" </dev/null &
    qemu=$!
    wait "$qemu"; qrc=$?
    qemu=""
    t1=$EPOCHREALTIME
    exec {qout}>&- {qerr}>&- {evw}>&-
    wait "$stamper" "$relay_out" "$relay_err"; stamper=""
  }
  local t0 t1 qrc attempt
  for attempt in 1 2; do
    boot
    # A guest that stopped before the command started has run nothing of
    # ours. Under TCG its kernel has been seen to panic at boot, rarely (an
    # oops in early userspace, once in many boots); so it boots once more.
    if ((attempt == 1 && qrc != 124 && qrc != 137)) && ! grep -q ' ready$' "$run/events"; then
      say "the guest stopped before the command started (qemu status $qrc); console tail:"
      tail -n 30 "$run/console" >&2
      say "booting it once more"
      continue
    fi
    break
  done

  if [[ ${MCPSANDBOX_GUEST_TIMING:-0} == 1 ]]; then
    awk -v t0="$t0" -v t1="$t1" -v acc="$accel" '
      function span(from, to) { return (from && to) ? sprintf("%.1f s", to - from) : "-" }
      $2 == "agent" { a = $1 } $2 == "ready" { r = $1 } $2 == "exit" { e = $1 }
      END { printf "guest.sh timing (%s): qemu start -> agent %s, -> command %s; command %s; total %s\n",
                   acc, span(t0, a), span(t0, r), span(r, e), span(t0, t1) }' "$run/events" >&2
  fi
  [[ ${MCPSANDBOX_GUEST_CONSOLE:-0} == 1 ]] && { say "serial console:"; cat "$run/console" >&2; }

  if ((qrc == 124 || qrc == 137)); then
    if grep -q ' ready$' "$run/events"; then
      say "timed out after $timeout s (the command was running)"
    else
      say "timed out after $timeout s, before the command started; console tail:"
      tail -n 20 "$run/console" >&2
    fi
    exit 124
  fi
  local status
  status=$(awk '$2 == "exit" { print $3 }' "$run/events")
  if [[ -z $status ]]; then
    say "the guest stopped before the command finished (qemu status $qrc)$(awk '$2 == "fail" { $1 = $2 = ""; printf ":%s", $0 }' "$run/events"); console tail:"
    tail -n 30 "$run/console" >&2
    exit 125
  fi
  exit "$status"
}

run="" qemu="" stamper=""
on_exit() {
  [[ -n $qemu ]] && kill "$qemu" 2>/dev/null
  [[ -n $stamper ]] && kill "$stamper" 2>/dev/null
  [[ -n $run ]] && rm -rf "$run"
}

release=${MCPSANDBOX_GUEST_RELEASE:-bookworm}
case ${1:-} in
  --release) (($# >= 2)) || { say "--release needs a value"; exit 2; }; release=$2; shift 2 ;;
  --release=*) release=${1#*=}; shift ;;
esac
select_release "$release"
case ${1:-} in
  build) shift; (($# == 0)) || { usage >&2; exit 2; }; ensure_image; exit 0 ;;
  check) shift; (($# == 0)) || { usage >&2; exit 2; }; cmd_check ;;
  run) shift; cmd_run "$@" ;;
  -h | --help | help) usage; exit 0 ;;
  *) usage >&2; exit 2 ;;
esac

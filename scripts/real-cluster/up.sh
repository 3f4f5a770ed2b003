#!/usr/bin/env bash
# Starts a real management cluster on loopback, as envtest gives Go teams: etcd, kube-apiserver
# (--authorization-mode Node,RBAC) and kube-controller-manager (garbage collector, namespace and
# every other default controller), built by scripts/real-cluster/build.sh. No kubelet, scheduler
# or pods: managers run as local processes.
#
# It generates the certificates (serving CA, front-proxy CA and client, service-account key
# pair, an admin client certificate with system:masters, the controller manager's client
# certificate), waits until kube-apiserver's /readyz answers ok and the controller manager has
# created the default ServiceAccount, then prints
#     kubeconfig: <dir>/kubeconfig
# on stdout and stays in the foreground. Ctrl-C, SIGTERM, or its parent process going away
# stops everything it started (and removes <dir> unless --keep); it leaves no process behind.
# The controller manager is restarted when it exits, as a kubelet restarts its static pod.
# While it runs: SIGUSR1 restarts kube-apiserver, SIGUSR2 restarts etcd (each prints
# "restarted: <name>" once it serves again); reliability tests use them.
#
# Usage: scripts/real-cluster/up.sh [--dir DIR] [--port N] [--bin DIR] [--ready-timeout SECONDS]
#                                   [--keep] [-- EXTRA-KUBE-APISERVER-FLAGS...]
#   --dir            state folder (certificates, etcd data, logs, kubeconfig); default a new temp dir
#   --port           kube-apiserver's secure port (default: a free one)
#   --bin            folder with the three binaries (default: what build.sh builds or reuses)
#   --ready-timeout  seconds to wait for readiness (default 120)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

dir="" port="" bin="" ready_timeout=120 keep=0 extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --ready-timeout) ready_timeout=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "error: real-cluster: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

die() { echo "error: real-cluster: $*" >&2; teardown; exit 2; }

pids=() names=() started_dir=0
teardown() {
  trap - INT TERM EXIT USR1 USR2
  local i n
  # In reverse order of start (the controller manager, kube-apiserver, then etcd), each given
  # 10 s to stop before it is killed: kube-apiserver drains its requests against a live etcd.
  for ((i=${#pids[@]}-1; i>=0; i--)); do
    kill -TERM "${pids[$i]}" 2>/dev/null || true
    n=0
    while kill -0 "${pids[$i]}" 2>/dev/null && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done
    kill -KILL "${pids[$i]}" 2>/dev/null || true
    wait "${pids[$i]}" 2>/dev/null || true
  done
  pids=()
  if [ "$started_dir" = 1 ] && [ "$keep" = 0 ] && [ -n "$dir" ]; then rm -rf "$dir"; fi
}
trap 'teardown; exit 130' INT
trap 'teardown; exit 143' TERM
trap 'teardown' EXIT

for tool in openssl curl; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found (the script needs it; apt-get install $tool)"
done

if [ -z "$bin" ]; then
  bin=$("$here/build.sh") || exit 2
fi
for b in etcd kube-apiserver kube-controller-manager; do
  [ -x "$bin/$b" ] || die "$bin/$b not found: run scripts/real-cluster/build.sh (or pass --bin DIR)"
done

if [ -z "$dir" ]; then
  dir=$(mktemp -d "${TMPDIR:-/tmp}/capi-conformance-real-cluster-XXXXXX"); started_dir=1
else
  mkdir -p "$dir" || die "cannot create $dir"
  [ -e "$dir/kubeconfig" ] && { started_dir=0; }
fi
pki="$dir/pki" logs="$dir/logs"
mkdir -p "$pki" "$logs" "$dir/etcd"

in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
  local p n=0
  while [ $n -lt 200 ]; do
    p=$(( 20000 + RANDOM % 30000 ))
    if ! in_use "$p" && ! in_use "$((p+1))"; then echo "$p"; return 0; fi
    n=$((n+1))
  done
  return 1
}
if [ -n "$port" ]; then
  in_use "$port" && die "port $port on 127.0.0.1 is in use: pass another --port, or leave it out for a free one"
else
  port=$(free_port) || die "no free port found on 127.0.0.1"
fi
etcd_port=$(free_port) || die "no free port found on 127.0.0.1"
etcd_peer=$((etcd_port+1))

# --- certificates -----------------------------------------------------------------------
ossl() { openssl "$@" >>"$logs/openssl.log" 2>&1 || die "openssl $1 failed (see $logs/openssl.log)"; }
ca() { # name cn
  ossl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
    -subj "/CN=$2" -keyout "$pki/$1.key" -out "$pki/$1.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
}
leaf() { # name ca subject extKeyUsage [subjectAltName]
  ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "$3" \
    -keyout "$pki/$1.key" -out "$pki/$1.csr"
  { echo "basicConstraints=critical,CA:FALSE"; echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$4"; [ -n "${5:-}" ] && echo "subjectAltName=$5"; } > "$pki/$1.ext"
  ossl x509 -req -in "$pki/$1.csr" -CA "$pki/$2.crt" -CAkey "$pki/$2.key" -CAcreateserial -days 3650 \
    -extfile "$pki/$1.ext" -out "$pki/$1.crt"
}
if [ ! -s "$pki/admin.crt" ]; then
  ca ca kubernetes-ca
  ca front-proxy-ca front-proxy-ca
  leaf apiserver ca "/CN=kube-apiserver" serverAuth \
    "IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  leaf front-proxy-client front-proxy-ca "/CN=front-proxy-client" clientAuth
  leaf admin ca "/O=system:masters/CN=kubernetes-admin" clientAuth
  leaf controller-manager ca "/CN=system:kube-controller-manager" clientAuth
  ossl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$pki/sa.key"
  ossl pkey -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
fi

kubeconfig() { # file user
  local b64ca b64crt b64key
  b64ca=$(base64 -w0 "$pki/ca.crt"); b64crt=$(base64 -w0 "$pki/$2.crt"); b64key=$(base64 -w0 "$pki/$2.key")
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: real-cluster
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority-data: $b64ca
users:
- name: $2
  user:
    client-certificate-data: $b64crt
    client-key-data: $b64key
contexts:
- name: real-cluster
  context:
    cluster: real-cluster
    user: $2
current-context: real-cluster
EOF
  chmod 600 "$1"
}
kubeconfig "$dir/kubeconfig" admin
kubeconfig "$dir/controller-manager.kubeconfig" controller-manager

# --- processes --------------------------------------------------------------------------
start() { # name args...
  local name=$1; shift
  "$bin/$name" "$@" >>"$logs/$name.log" 2>&1 &
  local pid=$! i
  for i in "${!names[@]}"; do
    if [ "${names[$i]}" = "$name" ]; then pids[$i]=$pid; return; fi
  done
  names+=("$name"); pids+=("$pid")
}
pid_of() { local i; for i in "${!names[@]}"; do [ "${names[$i]}" = "$1" ] && echo "${pids[$i]}"; done; }
alive() { kill -0 "$(pid_of "$1")" 2>/dev/null; }
exited() { # name -> dies with its log
  echo "error: real-cluster: $1 exited; the end of $logs/$1.log:" >&2
  tail -15 "$logs/$1.log" >&2
  teardown; exit 2
}
stop_one() {
  local pid; pid=$(pid_of "$1")
  kill -TERM "$pid" 2>/dev/null || true
  local n=0; while kill -0 "$pid" 2>/dev/null && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

etcd_args=(--name default --data-dir "$dir/etcd"
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port"
  --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer"
  --initial-cluster "default=http://127.0.0.1:$etcd_peer" --listen-metrics-urls "" --log-level warn)
apiserver_args=(--etcd-servers "http://127.0.0.1:$etcd_port"
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$port" --cert-dir "$pki"
  --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key"
  --client-ca-file "$pki/ca.crt"
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key"
  --service-account-issuer https://kubernetes.default.svc.cluster.local
  --service-cluster-ip-range 10.0.0.0/24 --allow-privileged=true
  --authorization-mode Node,RBAC
  --requestheader-client-ca-file "$pki/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client
  --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group
  --requestheader-extra-headers-prefix X-Remote-Extra-
  --proxy-client-cert-file "$pki/front-proxy-client.crt" --proxy-client-key-file "$pki/front-proxy-client.key"
  "${extra[@]}")
kcm_args=(--kubeconfig "$dir/controller-manager.kubeconfig"
  --authentication-kubeconfig "$dir/controller-manager.kubeconfig"
  --authorization-kubeconfig "$dir/controller-manager.kubeconfig"
  --bind-address 127.0.0.1 --secure-port 0 --leader-elect=false
  --use-service-account-credentials=true
  --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt"
  --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key"
  --service-cluster-ip-range 10.0.0.0/24 --controllers '*')

curl_api() { curl -sS --max-time 5 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "https://127.0.0.1:$port$1"; }
deadline=$(( $(date +%s) + ready_timeout ))
wait_for() { # what name probe-command
  local what=$1 name=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    alive "$name" || exited "$name"
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "error: real-cluster: $what not ready within ${ready_timeout}s; the end of $logs/$name.log:" >&2
      tail -15 "$logs/$name.log" >&2
      teardown; exit 2
    fi
    sleep 0.2
  done
}
etcd_ready() { curl -sf --max-time 2 "http://127.0.0.1:$etcd_port/health" | grep -q '"health":"true"'; }
apiserver_ready() { [ "$(curl_api /readyz)" = ok ]; }
kcm_ready() { curl_api /api/v1/namespaces/default/serviceaccounts/default | grep -q '"name": "default"'; }

start etcd "${etcd_args[@]}"
wait_for etcd etcd etcd_ready
start kube-apiserver "${apiserver_args[@]}"
wait_for kube-apiserver kube-apiserver apiserver_ready
start kube-controller-manager "${kcm_args[@]}"
wait_for "kube-controller-manager (the default ServiceAccount)" kube-controller-manager kcm_ready

restart() { # name ready-probe
  stop_one "$1"
  start "$1" "${@:3}"
  deadline=$(( $(date +%s) + ready_timeout ))
  wait_for "$1 (restarted)" "$1" "$2"
  echo "restarted: $1"
}
restart_apiserver=0 restart_etcd=0
trap 'restart_apiserver=1' USR1
trap 'restart_etcd=1' USR2

echo "kubeconfig: $dir/kubeconfig"
echo "kube-apiserver: https://127.0.0.1:$port ($("$bin/kube-apiserver" --version 2>/dev/null)), etcd: http://127.0.0.1:$etcd_port, logs: $logs" >&2
parent=$PPID
while :; do
  sleep 0.5 & wait $! 2>/dev/null
  if [ "$restart_apiserver" = 1 ]; then restart_apiserver=0; restart kube-apiserver apiserver_ready "${apiserver_args[@]}"; fi
  if [ "$restart_etcd" = 1 ]; then restart_etcd=0; restart etcd etcd_ready "${etcd_args[@]}"; fi
  kill -0 "$parent" 2>/dev/null || { teardown; exit 0; }
  for n in etcd kube-apiserver; do alive "$n" || exited "$n"; done
  # The controller manager exits when kube-apiserver goes away while it starts its controllers
  # (a restart of kube-apiserver); on a real node the kubelet restarts it, here this loop does.
  if ! alive kube-controller-manager; then
    echo "real-cluster: kube-controller-manager exited; starting it again (its log: $logs/kube-controller-manager.log)" >&2
    start kube-controller-manager "${kcm_args[@]}"
  fi
done

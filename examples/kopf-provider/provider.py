#!/usr/bin/env python3
"""A small Cluster API infrastructure provider written with kopf.

KopfCluster and KopfMachine (group infrastructure.kopf.example.com, contract v1beta2) and their
templates, reconciled the way the CAPI contract asks:

- owner gate: nothing happens until a Cluster (KopfCluster) or Machine (KopfMachine, controller
  reference) owns the object; the Cluster is found through the `cluster.x-k8s.io/cluster-name`
  label and must exist;
- pause: while `Cluster.spec.paused` or the object's `cluster.x-k8s.io/paused` annotation is set,
  the only write is the `Paused` condition (True/Paused, False/NotPaused otherwise);
- externally managed (`cluster.x-k8s.io/managed-by`): never written to;
- finalizer: kopf's own (`settings.persistence.finalizer`), added through a deletion handler
  whose filter holds once the object is owned, unpaused and its Cluster exists; the handler
  releases the simulated infrastructure and kopf removes the finalizer;
- KopfCluster: a control plane endpoint, `status.initialization.provisioned`, failure domains,
  `Ready`; KopfMachine: waits for the Cluster's infrastructure and the Machine's bootstrap data,
  then `spec.providerID`, provisioned, addresses, the Machine's failure domain, `Ready`;
- admission webhooks served by kopf's own `WebhookServer` with the certificate in
  `--webhook-cert-dir` on `--webhook-port`: defaulting (`spec.region`, `spec.flavor`) and
  validation (flavor values, immutable region and providerID, immutable templates except for
  the topology controller's dry-run).

The webhook configurations are static (infrastructure-components.yaml), calling the Service
`kopf-webhook-service` that cert-manager's CA injector and the Service routing of the cluster (or
of `capi-conformance check --embedded`) connect to this process; kopf's self-managed
configurations are not used, so the provider never needs RBAC on webhook configurations.

Reconciliation is level-triggered, as in controller-runtime providers: every event of an
object, and every event of the Cluster or Machine it depends on, runs one reconcile of the
object from a fresh read. kopf's diff-base is kept in memory, so kopf itself never writes its
bookkeeping annotation to objects the provider must leave alone.

Faults (for tests; `--fault RULE`, repeatable, or KOPF_PROVIDER_FAULTS=RULE,RULE):
- `infra-cluster/finalizer`: KopfClusters get no finalizer;
- `infra-machine/finalizer`: KopfMachines get no finalizer;
- `template/ssa-dry-run`: the template webhook rejects the topology dry-run too.
"""

import argparse
import asyncio
import datetime
import hashlib
import logging
import os
import sys
import time

import kopf
import kubernetes
from kubernetes.client.rest import ApiException

GROUP = "infrastructure.kopf.example.com"
VERSION = "v1alpha1"
CORE_GROUP = "cluster.x-k8s.io"
CORE_VERSION = "v1beta2"
FINALIZER = f"{GROUP}/kopf-provider"
CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name"
WATCH_FILTER_LABEL = "cluster.x-k8s.io/watch-filter"
POOL_NAME_LABEL = "cluster.x-k8s.io/pool-name"
PAUSED_ANNOTATION = "cluster.x-k8s.io/paused"
MANAGED_BY_ANNOTATION = "cluster.x-k8s.io/managed-by"
DRY_RUN_ANNOTATION = "topology.cluster.x-k8s.io/dry-run"
TRANSIENT = (429, 500, 502, 503, 504)
DEFAULT_REGION = "kopf-local-1"
DEFAULT_FLAVOR = "small"
FLAVORS = ("small", "medium", "large")
ENDPOINT_PORT = 6443
FAILURE_DOMAINS = [
    {"name": "fd-1", "controlPlane": True, "attributes": {"zone": "kopf-a"}},
    {"name": "fd-2", "controlPlane": True, "attributes": {"zone": "kopf-b"}},
    {"name": "fd-3", "controlPlane": False, "attributes": {"zone": "kopf-c"}},
]

log = logging.getLogger("kopf-provider")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kubeconfig", help="kubeconfig file (default: KUBECONFIG or ~/.kube/config)")
    p.add_argument("--namespace", default="", help="only reconcile objects in this namespace")
    p.add_argument("--watch-filter", default="", help=f"only objects labelled {WATCH_FILTER_LABEL}=VALUE")
    p.add_argument("--webhook-cert-dir", required=True, help="directory with tls.crt, tls.key (and ca.crt)")
    p.add_argument("--webhook-port", type=int, default=9443, help="port of the admission webhook server")
    p.add_argument("--webhook-addr", default="127.0.0.1", help="address of the admission webhook server")
    p.add_argument("--health-addr", default="", help="HOST:PORT of kopf's liveness endpoint (/healthz)")
    p.add_argument("--fault", action="append", default=[], help="break the named rule (tests)")
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args(argv)
    env_faults = os.environ.get("KOPF_PROVIDER_FAULTS", "")
    args.faults = {f for f in args.fault + env_faults.split(",") if f}
    return args


# ---------------------------------------------------------------------------------------------
# API access (the kubernetes client, in worker threads so kopf's event loop keeps running)


class Api:
    def __init__(self):
        self.custom = kubernetes.client.CustomObjectsApi()

    async def get(self, group, version, plural, ns, name):
        try:
            return await asyncio.to_thread(
                self.custom.get_namespaced_custom_object, group, version, ns, plural, name)
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    def get_sync(self, group, version, plural, ns, name):
        try:
            return self.custom.get_namespaced_custom_object(group, version, ns, plural, name)
        except ApiException as e:
            if e.status == 404:
                return None
            raise

    async def list(self, plural, ns, selector):
        out = await asyncio.to_thread(
            self.custom.list_namespaced_custom_object, GROUP, VERSION, ns, plural,
            label_selector=selector)
        return out.get("items", [])

    async def patch(self, plural, obj, body, status=False):
        """Merge-patches `obj` on the condition that it is unchanged (resourceVersion)."""
        meta = obj["metadata"]
        body = dict(body)
        body["metadata"] = dict(body.get("metadata", {}), resourceVersion=meta["resourceVersion"])
        fn = (self.custom.patch_namespaced_custom_object_status if status
              else self.custom.patch_namespaced_custom_object)
        return await asyncio.to_thread(fn, GROUP, VERSION, meta["namespace"], plural, meta["name"], body)


class Conflict(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Object helpers


def meta(obj):
    return obj.get("metadata") or {}


def labels(obj):
    return meta(obj).get("labels") or {}


def annotations(obj):
    return meta(obj).get("annotations") or {}


def deleting(obj):
    return bool(meta(obj).get("deletionTimestamp"))


def core_owner(obj, kind, controller_only):
    for ref in meta(obj).get("ownerReferences") or []:
        group = ref.get("apiVersion", "").split("/")[0]
        if ref.get("kind") == kind and group == CORE_GROUP and (ref.get("controller") or not controller_only):
            return ref
    return None


OWNER = {"kopfclusters": ("Cluster", False), "kopfmachines": ("Machine", True)}


def owner_of(plural, obj):
    kind, controller_only = OWNER[plural]
    return core_owner(obj, kind, controller_only)


def cluster_name_of(plural, obj):
    name = labels(obj).get(CLUSTER_NAME_LABEL)
    if name:
        return name
    owner = owner_of(plural, obj)
    if owner and owner.get("kind") == "Cluster":
        return owner.get("name")
    return None


def cluster_paused(cluster, obj):
    return bool((cluster.get("spec") or {}).get("paused")) or PAUSED_ANNOTATION in annotations(obj)


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def merged_conditions(obj, wanted):
    """The object's conditions with `wanted` ([(type, bool, reason, message)]) set; the
    transition time moves only when a status changes."""
    current = {c.get("type"): c for c in ((obj.get("status") or {}).get("conditions") or [])}
    generation = meta(obj).get("generation")
    for type_, ok, reason, message in wanted:
        status = "True" if ok else "False"
        old = current.get(type_)
        c = {"type": type_, "status": status, "reason": reason, "message": message,
             "lastTransitionTime": old["lastTransitionTime"] if old and old.get("status") == status and old.get("lastTransitionTime") else now()}
        if generation is not None:
            c["observedGeneration"] = generation
        current[type_] = c
    return sorted(current.values(), key=lambda c: c["type"])


def contains(have, want):
    """Whether `have` already holds every value of `want` (objects key by key)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(
            (k in have and contains(have[k], v)) or (v is None and k not in have) for k, v in want.items())
    return have == want


def same_conditions(obj, conditions):
    def strip(cs):
        return [{k: v for k, v in c.items() if k != "lastTransitionTime"} for c in cs]
    return strip((obj.get("status") or {}).get("conditions") or []) == strip(conditions)


# ---------------------------------------------------------------------------------------------
# The provider


class Provider:
    def __init__(self, args):
        self.args = args
        self.faults = args.faults
        self.api = Api()
        self.locks = {}
        # The simulated infrastructure: what exists, by object uid.
        self.infrastructure = set()
        # Cluster lookups of the finalizer filter, by (uid, resourceVersion) of the object.
        self._gate_memo = {}

    def fault(self, rule):
        return rule in self.faults

    def lock(self, key):
        if key not in self.locks:
            self.locks[key] = asyncio.Lock()
        return self.locks[key]

    # --- the finalizer filter (kopf adds its finalizer while a deletion handler matches)

    def wants_finalizer(self, plural, body):
        fault = {"kopfclusters": "infra-cluster/finalizer", "kopfmachines": "infra-machine/finalizer"}[plural]
        if self.fault(fault):
            return False
        obj = dict(body)
        if FINALIZER in (meta(obj).get("finalizers") or []):
            return True  # held until the deletion handler has released the infrastructure
        if deleting(obj) or MANAGED_BY_ANNOTATION in annotations(obj) or owner_of(plural, obj) is None:
            return False
        key = (meta(obj).get("uid"), meta(obj).get("resourceVersion"))
        if key not in self._gate_memo:
            if len(self._gate_memo) > 512:
                self._gate_memo.clear()
            # A live read (not a cache): a Cluster paused just before the adoption is seen.
            name = cluster_name_of(plural, obj)
            cluster = None
            for delay in (0.01, 0.02, 0.04, 0.08, 0.16, None):
                try:
                    if name:
                        cluster = self.api.get_sync(CORE_GROUP, CORE_VERSION, "clusters", meta(obj).get("namespace"), name)
                    break
                except (ApiException, OSError) as e:
                    # kopf filters are synchronous: a few quick retries (blocking kopf's loop
                    # briefly), since no later event may come to ask again.
                    if delay is None or (isinstance(e, ApiException) and e.status not in TRANSIENT):
                        log.warning("finalizer filter: cannot read Cluster %s: %s", name, e)
                        return False
                    time.sleep(delay)
            self._gate_memo[key] = cluster is not None and not cluster_paused(cluster, obj)
        return self._gate_memo[key]

    # --- reconcile entry points

    async def retrying(self, what, attempt):
        """Runs `attempt()` until it succeeds. kopf never retries a failed event handler, so
        the provider does, as controller-runtime requeues: at once after a conflict (the object
        changed meanwhile), with backoff after a transient error."""
        delay = 0.05
        for _ in range(40):
            try:
                return await attempt()
            except ApiException as e:
                if e.status == 409:
                    continue
                if e.status not in TRANSIENT:
                    raise
                log.info("%s: %s %s, retrying in %.2fs", what, e.status, e.reason, delay)
            except OSError as e:  # connection trouble (urllib3's errors are OSErrors too)
                log.info("%s: %s, retrying in %.2fs", what, e, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 2.0)
        log.error("%s: giving up after repeated errors", what)
        return None

    async def reconcile(self, plural, ns, name):
        """One reconcile of the object from a fresh read."""
        async def attempt():
            obj = await self.api.get(GROUP, VERSION, plural, ns, name)
            if obj is None:
                return
            if plural == "kopfclusters":
                await self.reconcile_cluster(obj)
            else:
                await self.reconcile_machine(obj)

        async with self.lock((plural, ns, name)):
            await self.retrying(f"{plural} {ns}/{name}", attempt)

    async def gates(self, plural, obj):
        """Owner gate, cluster lookup, pause (with the Paused condition). Returns the Cluster
        when reconciliation may go on, else None; `obj` is updated in place by writes."""
        if MANAGED_BY_ANNOTATION in annotations(obj) or deleting(obj):
            return None
        if owner_of(plural, obj) is None:
            return None
        name = cluster_name_of(plural, obj)
        cluster = await self.api.get(CORE_GROUP, CORE_VERSION, "clusters", meta(obj)["namespace"], name) if name else None
        if cluster is None:
            return None
        paused = cluster_paused(cluster, obj)
        conditions = merged_conditions(obj, [("Paused", paused, "Paused" if paused else "NotPaused", "")])
        if not same_conditions(obj, conditions):
            obj.update(await self.api.patch(plural, obj, {"status": {"conditions": conditions}}, status=True))
        if paused:
            return None
        return cluster

    def finalized(self, plural, obj):
        """The provider acts only once kopf's finalizer is on (kopf adds it on this or the next
        event: see `wants_finalizer`)."""
        fault = {"kopfclusters": "infra-cluster/finalizer", "kopfmachines": "infra-machine/finalizer"}[plural]
        return self.fault(fault) or FINALIZER in (meta(obj).get("finalizers") or [])

    async def write_status(self, plural, obj, status, wanted):
        status = dict(status, conditions=merged_conditions(obj, wanted))
        current = obj.get("status") or {}
        if contains({k: v for k, v in current.items() if k != "conditions"},
                    {k: v for k, v in status.items() if k != "conditions"}) and same_conditions(obj, status["conditions"]):
            return
        obj.update(await self.api.patch(plural, obj, {"status": status}, status=True))

    async def reconcile_cluster(self, obj):
        plural = "kopfclusters"
        if await self.gates(plural, obj) is None or not self.finalized(plural, obj):
            return
        self.infrastructure.add(meta(obj)["uid"])
        m = meta(obj)
        if not ((obj.get("spec") or {}).get("controlPlaneEndpoint") or {}).get("host"):
            host = f"{m['name']}.{m['namespace']}.kopf.example.com"
            obj.update(await self.api.patch(plural, obj, {"spec": {"controlPlaneEndpoint": {"host": host, "port": ENDPOINT_PORT}}}))
        await self.write_status(
            plural, obj,
            {"initialization": {"provisioned": True}, "failureDomains": FAILURE_DOMAINS},
            [("Ready", True, "Provisioned", "")])

    async def reconcile_machine(self, obj):
        plural = "kopfmachines"
        if POOL_NAME_LABEL in labels(obj):
            return
        cluster = await self.gates(plural, obj)
        if cluster is None or not self.finalized(plural, obj):
            return
        m = meta(obj)
        owner = owner_of(plural, obj)
        machine = await self.api.get(CORE_GROUP, CORE_VERSION, "machines", m["namespace"], owner["name"])
        if machine is None:
            return
        infra_ready = ((cluster.get("status") or {}).get("initialization") or {}).get("infrastructureProvisioned")
        if not infra_ready:
            await self.write_status(plural, obj, {}, [("Ready", False, "WaitingForClusterInfrastructure",
                                                       "cluster infrastructure is not provisioned yet")])
            return
        if not ((machine.get("spec") or {}).get("bootstrap") or {}).get("dataSecretName"):
            await self.write_status(plural, obj, {}, [("Ready", False, "WaitingForBootstrapData",
                                                       "the Machine has no bootstrap data secret yet")])
            return
        self.infrastructure.add(m["uid"])
        if not (obj.get("spec") or {}).get("providerID"):
            provider_id = f"kopf://{m['namespace']}/{m['name']}/{m['uid'][:8]}"
            obj.update(await self.api.patch(plural, obj, {"spec": {"providerID": provider_id}}))
        digest = hashlib.sha256(m["uid"].encode()).digest()
        status = {
            "initialization": {"provisioned": True},
            "addresses": [
                {"type": "InternalIP", "address": f"10.{digest[0]}.{digest[1]}.{max(digest[2] & 0xFE, 2)}"},
                {"type": "Hostname", "address": m["name"]},
            ],
        }
        failure_domain = (machine.get("spec") or {}).get("failureDomain")
        if failure_domain:
            status["failureDomain"] = failure_domain
        await self.write_status(plural, obj, status, [("Ready", True, "Provisioned", "")])

    async def dependents(self, ns, cluster_name):
        """The KopfClusters and KopfMachines of a Cluster (by the cluster-name label)."""
        selector = f"{CLUSTER_NAME_LABEL}={cluster_name}"
        if self.args.watch_filter:
            selector += f",{WATCH_FILTER_LABEL}={self.args.watch_filter}"

        async def attempt():
            out = []
            for plural in ("kopfclusters", "kopfmachines"):
                out += [(plural, i["metadata"]["name"]) for i in await self.api.list(plural, ns, selector)]
            return out

        return await self.retrying(f"dependents of Cluster {ns}/{cluster_name}", attempt) or []

    def release(self, obj):
        self.infrastructure.discard(meta(obj).get("uid"))


class MemoryDiffBase(kopf.DiffBaseStorage):
    """kopf's diff-base (the last handled state) in memory instead of an annotation on the
    object: the provider's handlers are level-triggered, and an annotation would be a write to
    objects the contract says must stay untouched (unowned, paused, externally managed)."""

    def __init__(self):
        super().__init__()
        self.essences = {}

    def fetch(self, *, body):
        return self.essences.get(body.get("metadata", {}).get("uid"))

    def store(self, *, body, patch, essence):
        self.essences[body.get("metadata", {}).get("uid")] = essence


# ---------------------------------------------------------------------------------------------
# Handlers


def register(provider, args):
    filters = {"labels": {WATCH_FILTER_LABEL: args.watch_filter}} if args.watch_filter else {}

    @kopf.on.login()
    def login(**kwargs):
        # kopf's own kubeconfig login (KUBECONFIG, current context); the kubernetes client's
        # piggybacking would read the variable as it was when the client was imported.
        return kopf.login_with_kubeconfig(**kwargs)

    @kopf.on.startup()
    def configure(settings: kopf.OperatorSettings, **_):
        settings.persistence.finalizer = FINALIZER
        settings.persistence.diffbase_storage = MemoryDiffBase()
        settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=GROUP)
        settings.posting.level = logging.WARNING
        cert_dir = args.webhook_cert_dir
        ca = os.path.join(cert_dir, "ca.crt")
        settings.admission.server = kopf.WebhookServer(
            addr=args.webhook_addr,
            port=args.webhook_port,
            certfile=os.path.join(cert_dir, "tls.crt"),
            pkeyfile=os.path.join(cert_dir, "tls.key"),
            cafile=ca if os.path.exists(ca) else None,
        )
        settings.admission.managed = None

    for plural in ("kopfclusters", "kopfmachines"):
        async def on_event(namespace, name, plural=plural, **_):
            await provider.reconcile(plural, namespace, name)

        kopf.on.event(GROUP, VERSION, plural, id=f"reconcile-{plural}", **filters)(on_event)

        def release(body, plural=plural, **_):
            provider.release(dict(body))

        def holds_or_wants(body, plural=plural, **_):
            return provider.wants_finalizer(plural, body)

        kopf.on.delete(GROUP, VERSION, plural, id=f"release-{plural}", when=holds_or_wants, **filters)(release)

    @kopf.on.event(CORE_GROUP, CORE_VERSION, "clusters", id="cluster-changed", **filters)
    async def cluster_changed(namespace, name, **_):
        for plural, dependent in await provider.dependents(namespace, name):
            await provider.reconcile(plural, namespace, dependent)

    @kopf.on.event(CORE_GROUP, CORE_VERSION, "machines", id="machine-changed", **filters)
    async def machine_changed(namespace, spec, **_):
        ref = spec.get("infrastructureRef") or {}
        if ref.get("apiGroup") == GROUP and ref.get("kind") == "KopfMachine" and ref.get("name"):
            await provider.reconcile("kopfmachines", namespace, ref["name"])

    # Admission: defaulting and validation, one handler per kind; the handler id is the path.
    def default_cluster_spec(spec):
        return {} if spec.get("region") else {"region": DEFAULT_REGION}

    def default_machine_spec(spec):
        return {} if spec.get("flavor") else {"flavor": DEFAULT_FLAVOR}

    def validate_cluster_spec(spec, old, path):
        if old is not None and old.get("region") and spec.get("region") != old.get("region"):
            raise kopf.AdmissionError(f"{path}.region: Invalid value: \"{spec.get('region')}\": field is immutable", code=422)

    def validate_machine_spec(spec, old, path):
        if spec.get("flavor") not in FLAVORS:
            raise kopf.AdmissionError(
                f"{path}.flavor: Unsupported value: \"{spec.get('flavor')}\": supported values: {', '.join(FLAVORS)}", code=422)
        if old is not None and old.get("providerID") and spec.get("providerID") != old.get("providerID"):
            raise kopf.AdmissionError(f"{path}.providerID: Invalid value: \"{spec.get('providerID')}\": field is immutable", code=422)

    kinds = [
        ("kopfclusters", "kopfcluster", default_cluster_spec, validate_cluster_spec),
        ("kopfmachines", "kopfmachine", default_machine_spec, validate_machine_spec),
    ]
    for plural, singular, defaulter, validator in kinds:
        def mutate_base(spec, patch, defaulter=defaulter, **_):
            defaults = defaulter(spec)
            if defaults:
                patch.spec.update(defaults)

        def mutate_template(spec, patch, defaulter=defaulter, **_):
            defaults = defaulter(((spec.get("template") or {}).get("spec")) or {})
            if defaults:
                patch.spec["template"] = {"spec": defaults}

        def validate_base(spec, old, validator=validator, **_):
            validator(spec, (old or {}).get("spec") if old else None, "spec")

        def validate_template(spec, old, dryrun, annotations, operation, validator=validator, **_):
            validator(((spec.get("template") or {}).get("spec")) or {}, None, "spec.template.spec")
            if operation != "UPDATE" or old is None:
                return
            if dict(old.get("spec") or {}) == dict(spec):
                return
            topology_dry_run = dryrun and DRY_RUN_ANNOTATION in annotations
            if topology_dry_run and not provider.fault("template/ssa-dry-run"):
                return
            raise kopf.AdmissionError("spec: Invalid value: the template spec is immutable", code=422)

        kopf.on.mutate(GROUP, VERSION, plural, id=f"default-{singular}", operations=["CREATE", "UPDATE"])(mutate_base)
        kopf.on.mutate(GROUP, VERSION, f"{singular}templates", id=f"default-{singular}template",
                       operations=["CREATE", "UPDATE"])(mutate_template)
        kopf.on.validate(GROUP, VERSION, plural, id=f"validate-{singular}", operations=["CREATE", "UPDATE"])(validate_base)
        kopf.on.validate(GROUP, VERSION, f"{singular}templates", id=f"validate-{singular}template",
                         operations=["CREATE", "UPDATE"])(validate_template)


def main(argv):
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.kubeconfig:
        # kopf logs in through the kubernetes client (which reads KUBECONFIG) and so do we.
        os.environ["KUBECONFIG"] = args.kubeconfig
    kubernetes.config.load_kube_config(config_file=args.kubeconfig)
    provider = Provider(args)
    register(provider, args)
    liveness = f"http://{args.health_addr}/healthz" if args.health_addr else None
    kopf.run(
        standalone=True,
        namespaces=[args.namespace] if args.namespace else (),
        clusterwide=not args.namespace,
        liveness_endpoint=liveness,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

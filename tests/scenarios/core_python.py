"""Core conversion through Python's kubernetes client (an independent reader).

Usage: core_python.py KUBECONFIG NAMESPACE. Creates a Cluster at cluster.x-k8s.io/v1beta2 and
reads it at v1beta1, and the reverse, asserting the converted fields; prints "ok" at the end.
"""
import sys

from kubernetes import client, config

GROUP = "cluster.x-k8s.io"
INFRA_GROUP = "infrastructure.mock.capi-conformance.io"
INFRA_VERSION = "v1beta2"  # the newest version the MockCluster CRD labels for its contract

kubeconfig, ns = sys.argv[1], sys.argv[2]
config.load_kube_config(config_file=kubeconfig)
api = client.CustomObjectsApi()


def cluster(version, name, spec):
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Cluster",
            "metadata": {"name": name}, "spec": spec}


def get(version, name):
    return api.get_namespaced_custom_object(GROUP, version, ns, "clusters", name)


def status(version, name, body):
    api.patch_namespaced_custom_object_status(GROUP, version, ns, "clusters", name, body)


def check(what, got, want):
    if got != want:
        sys.exit(f"{what}: got {got!r}, want {want!r}")


# Written at v1beta2, read at v1beta1.
api.create_namespaced_custom_object(GROUP, "v1beta2", ns, "clusters", cluster("v1beta2", "up", {
    "infrastructureRef": {"apiGroup": INFRA_GROUP, "kind": "MockCluster", "name": "up"},
    "controlPlaneEndpoint": {"host": "10.0.0.1", "port": 6443},
}))
status("v1beta2", "up", {"status": {"initialization": {
    "infrastructureProvisioned": True, "controlPlaneInitialized": True}}})
b1 = get("v1beta1", "up")
check("apiVersion at v1beta1", b1["apiVersion"], f"{GROUP}/v1beta1")
check("v1beta1 infrastructureRef", b1["spec"]["infrastructureRef"], {
    "apiVersion": f"{INFRA_GROUP}/{INFRA_VERSION}", "kind": "MockCluster", "name": "up",
    "namespace": ns})
check("v1beta1 status.infrastructureReady", b1["status"].get("infrastructureReady"), True)
check("v1beta1 status.controlPlaneReady", b1["status"].get("controlPlaneReady"), True)
check("v1beta1 endpoint", b1["spec"]["controlPlaneEndpoint"], {"host": "10.0.0.1", "port": 6443})
if "initialization" in b1["status"]:
    sys.exit("v1beta1 view has v1beta2's status.initialization")

# Written at v1beta1, read at v1beta2.
api.create_namespaced_custom_object(GROUP, "v1beta1", ns, "clusters", cluster("v1beta1", "down", {
    "infrastructureRef": {"apiVersion": f"{INFRA_GROUP}/{INFRA_VERSION}", "kind": "MockCluster",
                          "name": "down", "namespace": ns},
}))
status("v1beta1", "down", {"status": {"infrastructureReady": True, "controlPlaneReady": False}})
b2 = get("v1beta2", "down")
check("apiVersion at v1beta2", b2["apiVersion"], f"{GROUP}/v1beta2")
check("v1beta2 infrastructureRef", b2["spec"]["infrastructureRef"], {
    "apiGroup": INFRA_GROUP, "kind": "MockCluster", "name": "down"})
check("v1beta2 status.initialization.infrastructureProvisioned",
      b2["status"]["initialization"].get("infrastructureProvisioned"), True)
if b2["status"]["initialization"].get("controlPlaneInitialized"):
    sys.exit("v1beta2 controlPlaneInitialized true although v1beta1 controlPlaneReady was false")
if "infrastructureReady" in b2["status"]:
    sys.exit("v1beta2 view has v1beta1's status.infrastructureReady")
# And back: the v1beta1 view of what was written at v1beta1 is unchanged.
again = get("v1beta1", "down")
check("round trip infrastructureRef", again["spec"]["infrastructureRef"],
      {"apiVersion": f"{INFRA_GROUP}/{INFRA_VERSION}", "kind": "MockCluster", "name": "down",
       "namespace": ns})
print("ok")

//! Whether the benchmark runs in a virtual machine and/or a container.
//!
//! Both change what results mean (steal time, virtual disks, cgroup limits),
//! so they are recorded with every run. Detection reads well-known markers
//! without spawning `systemd-detect-virt`, which may not be installed:
//!
//! * hypervisor: `/sys/hypervisor/type` (Xen); else, on x86, the vendor
//!   signature of CPUID leaf `0x40000000`, which names the hypervisor the CPU
//!   actually talks to (DMI says "QEMU" for QEMU/KVM guests, and micro-VMs
//!   such as Firecracker have no DMI at all), with a cloud name from DMI
//!   appended (`"KVM (Amazon EC2)"`); else the DMI strings in
//!   `/sys/class/dmi/id` alone (the only source on aarch64); finally
//!   `"unknown"` when cpuinfo shows the `hypervisor` flag but nothing names it;
//! * container: `/run/systemd/container`, the Kubernetes service account or
//!   environment, `container=` in PID 1's environment (readable by root),
//!   `/run/.containerenv` (Podman), `/.dockerenv` (Docker), then the cgroup
//!   path of PID 1.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::sysfs::{read_text, read_trimmed};

/// Virtualization layers under the benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Virtualization {
    /// The hypervisor, e.g. `"KVM"`, `"VMware"`, `"Hyper-V"`, `"Xen"`,
    /// `"KVM (Amazon EC2)"` (cloud from DMI in parentheses), `"Amazon EC2"`
    /// (DMI alone); `"unknown"` when the CPU reports a hypervisor that
    /// nothing names; `None` on bare metal (or when undetectable).
    pub hypervisor: Option<String>,
    /// The container runtime: `"docker"`, `"podman"`, `"lxc"`,
    /// `"kubernetes"`, `"systemd-nspawn"`, or another name a runtime gave in
    /// `container=`; `None` when not detected.
    pub container: Option<String>,
}

/// The DMI strings (`/sys/class/dmi/id/*`) that name virtual hardware.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Dmi {
    /// `sys_vendor`.
    pub sys_vendor: String,
    /// `product_name`.
    pub product_name: String,
    /// `bios_vendor`.
    pub bios_vendor: String,
}

/// Cloud names [`hypervisor_from_dmi`] gives: they say where a VM runs
/// rather than which hypervisor runs it.
const CLOUDS: &[&str] = &[
    "Amazon EC2",
    "Google Compute Engine",
    "OpenStack",
    "Alibaba Cloud",
    "DigitalOcean",
    "Hetzner Cloud",
];

/// Names the hypervisor from DMI strings. `in_vm` (the cpuinfo `hypervisor`
/// flag) is required for cloud vendors, whose bare-metal instances carry the
/// same vendor string as their VMs.
pub(crate) fn hypervisor_from_dmi(dmi: &Dmi, in_vm: bool) -> Option<String> {
    let all = format!(
        "{} | {} | {}",
        dmi.sys_vendor, dmi.product_name, dmi.bios_vendor
    );
    let has = |needle: &str| all.contains(needle);
    let name = if has("KVM") {
        "KVM"
    } else if has("QEMU") {
        "QEMU"
    } else if has("VMware") {
        "VMware"
    } else if has("VirtualBox") || has("innotek") {
        "VirtualBox"
    } else if has("Microsoft Corporation") && has("Virtual Machine") {
        "Hyper-V"
    } else if has("Xen") {
        "Xen"
    } else if has("Parallels") {
        "Parallels"
    } else if has("Bochs") {
        "Bochs"
    } else if has("BHYVE") {
        "bhyve"
    } else if !in_vm {
        return None;
    } else if has("Amazon EC2") {
        "Amazon EC2"
    } else if has("Google") {
        "Google Compute Engine"
    } else if has("OpenStack") {
        "OpenStack"
    } else if has("Alibaba") {
        "Alibaba Cloud"
    } else if has("DigitalOcean") {
        "DigitalOcean"
    } else if has("Hetzner") {
        "Hetzner Cloud"
    } else {
        return None;
    };
    Some(name.to_string())
}

/// Names the hypervisor from the 12-byte vendor signature of CPUID leaf
/// `0x40000000` (EBX, ECX, EDX).
pub(crate) fn hypervisor_from_cpuid_signature(signature: &str) -> Option<String> {
    let signature = signature.trim_matches(|c: char| c == '\0' || c == ' ');
    let name = match signature {
        "KVMKVMKVM" => "KVM",
        "Microsoft Hv" => "Hyper-V",
        "VMwareVMware" => "VMware",
        "XenVMMXenVMM" => "Xen",
        "TCGTCGTCGTCG" => "QEMU TCG",
        "VBoxVBoxVBox" => "VirtualBox",
        "lrpepyh  vr" => "Parallels",
        "bhyve bhyve" => "bhyve",
        "ACRNACRNACRN" => "ACRN",
        "QNXQVMBSQG" => "QNX",
        "Linux KVM Hv" => "KVM",
        "" => return None,
        other => other,
    };
    Some(name.to_string())
}

/// Decides the hypervisor name from what was read: the contents of
/// `/sys/hypervisor/type`, the DMI strings, the CPUID signature and the
/// cpuinfo `hypervisor` flag (without which CPUID is not consulted).
pub(crate) fn hypervisor_name(
    sys_hypervisor_type: Option<&str>,
    dmi: &Dmi,
    cpuid_signature: Option<&str>,
    hypervisor_flag: bool,
) -> Option<String> {
    if let Some(kind) = sys_hypervisor_type.map(str::trim).filter(|t| !t.is_empty()) {
        return Some(if kind == "xen" { "Xen" } else { kind }.to_string());
    }
    let from_cpuid = cpuid_signature
        .filter(|_| hypervisor_flag)
        .and_then(hypervisor_from_cpuid_signature);
    match (from_cpuid, hypervisor_from_dmi(dmi, hypervisor_flag)) {
        (Some(cpu), Some(cloud)) if CLOUDS.contains(&cloud.as_str()) => {
            Some(format!("{cpu} ({cloud})"))
        }
        (Some(cpu), _) => Some(cpu),
        (None, Some(dmi)) => Some(dmi),
        (None, None) => hypervisor_flag.then(|| "unknown".to_string()),
    }
}

/// The CPUID hypervisor vendor signature, when the CPU says a hypervisor is
/// present.
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn cpuid_signature() -> Option<String> {
    #[cfg(target_arch = "x86")]
    use std::arch::x86::__cpuid;
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::__cpuid;
    #[allow(unused_unsafe)] // `__cpuid` is only safe to call on newer toolchains.
    // SAFETY: CPUID exists on every x86_64 CPU, and on every CPU the i686
    // target runs on; it only reads registers.
    let (features, leaf) = unsafe { (__cpuid(1), __cpuid(0x4000_0000)) };
    if features.ecx & (1 << 31) == 0 {
        return None;
    }
    let bytes: Vec<u8> = [leaf.ebx, leaf.ecx, leaf.edx]
        .iter()
        .flat_map(|r| r.to_le_bytes())
        .collect();
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// No CPUID outside x86.
#[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
fn cpuid_signature() -> Option<String> {
    None
}

/// Names the container runtime from the cgroup path of PID 1
/// (`/proc/1/cgroup`). Only cgroup v1 or a host-namespace view shows these;
/// inside a private cgroup namespace the path is just `/`.
pub(crate) fn container_from_cgroup(text: &str) -> Option<String> {
    let name = if text.contains("kubepods") {
        "kubernetes"
    } else if text.contains("libpod") {
        "podman"
    } else if text.contains("/docker/") || text.contains("docker-") {
        "docker"
    } else if text.contains("/lxc/") || text.contains("lxc.payload") {
        "lxc"
    } else if text.contains("machine.slice/machine-") || text.contains("/machine/") {
        "systemd-nspawn"
    } else {
        return None;
    };
    Some(name.to_string())
}

/// The `container=` variable of a NUL-separated environment block, as
/// `/proc/1/environ` holds it. `oci` (a generic value) is not a name.
pub(crate) fn container_from_environ(environ: &str) -> Option<String> {
    environ
        .split('\0')
        .find_map(|var| var.strip_prefix("container="))
        .map(str::trim)
        .filter(|name| !name.is_empty() && *name != "oci")
        .map(normalize_container_name)
}

/// Maps the spellings runtimes use to the names the inventory reports.
fn normalize_container_name(name: &str) -> String {
    if name == "lxc-libvirt" { "lxc" } else { name }.to_string()
}

/// What the container detection looked at.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ContainerSignals {
    /// Contents of `/run/systemd/container`.
    pub systemd_container: Option<String>,
    /// A Kubernetes service account is mounted or `KUBERNETES_SERVICE_HOST`
    /// is set.
    pub kubernetes: bool,
    /// Contents of `/proc/1/environ`, if readable.
    pub pid1_environ: Option<String>,
    /// `/run/.containerenv` exists.
    pub containerenv: bool,
    /// `/.dockerenv` exists.
    pub dockerenv: bool,
    /// Contents of `/proc/1/cgroup`.
    pub pid1_cgroup: Option<String>,
}

/// Decides the container runtime from the signals, most specific first.
pub(crate) fn container_from(signals: &ContainerSignals) -> Option<String> {
    if let Some(name) = signals
        .systemd_container
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty() && *n != "oci")
    {
        return Some(normalize_container_name(name));
    }
    if signals.kubernetes {
        return Some("kubernetes".to_string());
    }
    if let Some(name) = signals
        .pid1_environ
        .as_deref()
        .and_then(container_from_environ)
    {
        return Some(name);
    }
    if signals.containerenv {
        return Some("podman".to_string());
    }
    if signals.dockerenv {
        return Some("docker".to_string());
    }
    signals
        .pid1_cgroup
        .as_deref()
        .and_then(container_from_cgroup)
}

/// Probes hypervisor and container. `hypervisor_flag` is cpuinfo's
/// `hypervisor` flag.
pub(crate) fn probe(hypervisor_flag: bool) -> Virtualization {
    let dmi_dir = Path::new("/sys/class/dmi/id");
    let dmi_field = |name: &str| read_trimmed(dmi_dir.join(name)).unwrap_or_default();
    let dmi = Dmi {
        sys_vendor: dmi_field("sys_vendor"),
        product_name: dmi_field("product_name"),
        bios_vendor: dmi_field("bios_vendor"),
    };
    let signature = if hypervisor_flag {
        cpuid_signature()
    } else {
        None
    };
    let hypervisor = hypervisor_name(
        read_trimmed("/sys/hypervisor/type").as_deref(),
        &dmi,
        signature.as_deref(),
        hypervisor_flag,
    );

    let signals = ContainerSignals {
        systemd_container: read_trimmed("/run/systemd/container"),
        kubernetes: Path::new("/var/run/secrets/kubernetes.io").exists()
            || std::env::var_os("KUBERNETES_SERVICE_HOST").is_some(),
        pid1_environ: read_text("/proc/1/environ"),
        containerenv: Path::new("/run/.containerenv").exists(),
        dockerenv: Path::new("/.dockerenv").exists(),
        pid1_cgroup: read_text("/proc/1/cgroup"),
    };
    Virtualization {
        hypervisor,
        container: container_from(&signals),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dmi(sys_vendor: &str, product_name: &str, bios_vendor: &str) -> Dmi {
        Dmi {
            sys_vendor: sys_vendor.into(),
            product_name: product_name.into(),
            bios_vendor: bios_vendor.into(),
        }
    }

    #[test]
    fn dmi_names() {
        let cases = [
            (
                dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)", "SeaBIOS"),
                "QEMU",
            ),
            (dmi("Red Hat", "KVM", "SeaBIOS"), "KVM"),
            (
                dmi("VMware, Inc.", "VMware Virtual Platform", "Phoenix"),
                "VMware",
            ),
            (
                dmi("innotek GmbH", "VirtualBox", "innotek GmbH"),
                "VirtualBox",
            ),
            (
                dmi(
                    "Microsoft Corporation",
                    "Virtual Machine",
                    "Microsoft Corporation",
                ),
                "Hyper-V",
            ),
            (dmi("Xen", "HVM domU", "Xen"), "Xen"),
            (dmi("Amazon EC2", "m6i.large", "Amazon EC2"), "Amazon EC2"),
            (
                dmi("Google", "Google Compute Engine", "Google"),
                "Google Compute Engine",
            ),
            (dmi("Hetzner", "vServer", "Hetzner"), "Hetzner Cloud"),
        ];
        for (dmi, name) in cases {
            assert_eq!(
                hypervisor_from_dmi(&dmi, true).as_deref(),
                Some(name),
                "{dmi:?}"
            );
        }
    }

    #[test]
    fn dmi_bare_metal() {
        assert_eq!(
            hypervisor_from_dmi(&dmi("Dell Inc.", "PowerEdge R650", "Dell Inc."), false),
            None
        );
        // A metal instance: cloud vendor, but no hypervisor flag.
        assert_eq!(
            hypervisor_from_dmi(&dmi("Amazon EC2", "m6i.metal", "Amazon EC2"), false),
            None
        );
        assert_eq!(hypervisor_from_dmi(&Dmi::default(), true), None);
    }

    #[test]
    fn cpuid_signatures() {
        assert_eq!(
            hypervisor_from_cpuid_signature("KVMKVMKVM\0\0\0").as_deref(),
            Some("KVM")
        );
        assert_eq!(
            hypervisor_from_cpuid_signature("Microsoft Hv").as_deref(),
            Some("Hyper-V")
        );
        assert_eq!(
            hypervisor_from_cpuid_signature("TCGTCGTCGTCG").as_deref(),
            Some("QEMU TCG")
        );
        assert_eq!(
            hypervisor_from_cpuid_signature("NewVisor").as_deref(),
            Some("NewVisor")
        );
        assert_eq!(hypervisor_from_cpuid_signature("\0\0\0\0"), None);
    }

    #[test]
    fn cgroup_paths() {
        let docker_v1 = "12:pids:/docker/3f2a9c\n1:name=systemd:/docker/3f2a9c\n0::/\n";
        let docker_systemd = "0::/system.slice/docker-3f2a9c.scope\n";
        let k8s = "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-containerd-ab.scope\n";
        let podman = "0::/machine.slice/libpod-3f2a9c.scope/container\n";
        let lxc = "0::/lxc.payload.web01\n";
        let nspawn = "0::/machine.slice/machine-web01.scope/payload\n";
        // This machine's: cgroup v1 hierarchies, all at the root.
        let host = "9:name=systemd:/\n8:pids:/\n1:cpu:/\n0::/\n";
        assert_eq!(container_from_cgroup(docker_v1).as_deref(), Some("docker"));
        assert_eq!(
            container_from_cgroup(docker_systemd).as_deref(),
            Some("docker")
        );
        assert_eq!(container_from_cgroup(k8s).as_deref(), Some("kubernetes"));
        assert_eq!(container_from_cgroup(podman).as_deref(), Some("podman"));
        assert_eq!(container_from_cgroup(lxc).as_deref(), Some("lxc"));
        assert_eq!(
            container_from_cgroup(nspawn).as_deref(),
            Some("systemd-nspawn")
        );
        assert_eq!(container_from_cgroup(host), None);
    }

    #[test]
    fn environ_container_variable() {
        let environ = "HOME=/\0container=podman\0TERM=xterm\0";
        assert_eq!(container_from_environ(environ).as_deref(), Some("podman"));
        assert_eq!(
            container_from_environ("container=lxc-libvirt\0").as_deref(),
            Some("lxc")
        );
        assert_eq!(container_from_environ("container=oci\0"), None);
        assert_eq!(container_from_environ("HOME=/\0"), None);
    }

    #[test]
    fn container_signal_precedence() {
        let none = ContainerSignals::default();
        assert_eq!(container_from(&none), None);
        let docker = ContainerSignals {
            dockerenv: true,
            pid1_cgroup: Some("0::/\n".into()),
            ..none.clone()
        };
        assert_eq!(container_from(&docker).as_deref(), Some("docker"));
        let k8s_on_docker = ContainerSignals {
            kubernetes: true,
            ..docker.clone()
        };
        assert_eq!(
            container_from(&k8s_on_docker).as_deref(),
            Some("kubernetes")
        );
        let podman = ContainerSignals {
            containerenv: true,
            pid1_environ: Some("container=oci\0".into()),
            ..none.clone()
        };
        assert_eq!(container_from(&podman).as_deref(), Some("podman"));
        let nspawn = ContainerSignals {
            systemd_container: Some("systemd-nspawn\n".into()),
            dockerenv: true,
            ..none.clone()
        };
        assert_eq!(container_from(&nspawn).as_deref(), Some("systemd-nspawn"));
        let cgroup_only = ContainerSignals {
            pid1_cgroup: Some("1:name=systemd:/docker/ab\n".into()),
            ..none
        };
        assert_eq!(container_from(&cgroup_only).as_deref(), Some("docker"));
    }

    #[test]
    fn hypervisor_decision() {
        let qemu = dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)", "SeaBIOS");
        let ec2 = dmi("Amazon EC2", "m7i.large", "Amazon EC2");
        let none = Dmi::default();
        let kvm = Some("KVMKVMKVM\0\0\0");
        // QEMU machine accelerated by KVM: CPUID knows better than DMI.
        assert_eq!(
            hypervisor_name(None, &qemu, kvm, true).as_deref(),
            Some("KVM")
        );
        // Cloud name from DMI is kept beside the hypervisor.
        assert_eq!(
            hypervisor_name(None, &ec2, kvm, true).as_deref(),
            Some("KVM (Amazon EC2)")
        );
        // aarch64: no CPUID, DMI alone.
        assert_eq!(
            hypervisor_name(None, &ec2, None, true).as_deref(),
            Some("Amazon EC2")
        );
        assert_eq!(
            hypervisor_name(None, &qemu, None, false).as_deref(),
            Some("QEMU")
        );
        // Firecracker on this machine: no DMI, CPUID names KVM.
        assert_eq!(
            hypervisor_name(None, &none, kvm, true).as_deref(),
            Some("KVM")
        );
        // Flag set, nothing names it.
        assert_eq!(
            hypervisor_name(None, &none, None, true).as_deref(),
            Some("unknown")
        );
        // Xen PV guests have /sys/hypervisor/type.
        assert_eq!(
            hypervisor_name(Some("xen\n"), &none, None, true).as_deref(),
            Some("Xen")
        );
        // Bare metal: no flag, so CPUID is not trusted.
        assert_eq!(hypervisor_name(None, &none, kvm, false), None);
    }
}

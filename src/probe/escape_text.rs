//! The inventory's text escaped for showing ([`crate::visible`]): a
//! stored or imported run's inventory is only as trustworthy as the
//! document it came from.

use super::{
    CacheInfo, CgroupLimits, CpuInfo, CpuQuota, FilesystemInfo, HostInfo, MemoryInfo, MemoryLimit,
    OsInfo, Virtualization,
};
use crate::visible::EscapeText;

impl EscapeText for HostInfo {
    fn escape_text(&mut self) {
        let HostInfo {
            hostname,
            cpu,
            memory,
            os,
            virtualization,
            mitigations,
            transparent_hugepages,
            numa_nodes: _,
            filesystem,
            cgroup,
            databases,
        } = self;
        hostname.escape_text();
        cpu.escape_text();
        memory.escape_text();
        os.escape_text();
        virtualization.escape_text();
        mitigations.escape_text();
        transparent_hugepages.escape_text();
        filesystem.escape_text();
        cgroup.escape_text();
        databases.escape_text();
    }
}

impl EscapeText for CgroupLimits {
    fn escape_text(&mut self) {
        let CgroupLimits {
            cpu_quota,
            cpuset,
            memory_limit,
        } = self;
        cpu_quota.escape_text();
        cpuset.escape_text();
        memory_limit.escape_text();
    }
}

impl EscapeText for CpuQuota {
    fn escape_text(&mut self) {
        let CpuQuota {
            cpus: _,
            quota_us: _,
            period_us: _,
            cgroup,
        } = self;
        cgroup.escape_text();
    }
}

impl EscapeText for MemoryLimit {
    fn escape_text(&mut self) {
        let MemoryLimit { bytes: _, cgroup } = self;
        cgroup.escape_text();
    }
}

impl EscapeText for CpuInfo {
    fn escape_text(&mut self) {
        let CpuInfo {
            model,
            vendor,
            sockets: _,
            cores: _,
            threads: _,
            caches,
            flags,
            mhz: _,
            max_mhz: _,
            governor,
            scaling_driver,
            turbo: _,
            smt,
            smt_active: _,
            microcode,
        } = self;
        model.escape_text();
        vendor.escape_text();
        caches.escape_text();
        flags.escape_text();
        governor.escape_text();
        scaling_driver.escape_text();
        smt.escape_text();
        microcode.escape_text();
    }
}

impl EscapeText for CacheInfo {
    fn escape_text(&mut self) {
        let CacheInfo {
            level: _,
            kind,
            size_bytes: _,
            instances: _,
        } = self;
        kind.escape_text();
    }
}

/// Numbers only; named so that a text field added here must be escaped.
impl EscapeText for MemoryInfo {
    fn escape_text(&mut self) {
        let MemoryInfo {
            total_bytes: _,
            available_bytes: _,
            swap_total_bytes: _,
            swap_free_bytes: _,
        } = self;
    }
}

impl EscapeText for OsInfo {
    fn escape_text(&mut self) {
        let OsInfo {
            kernel,
            kernel_version,
            arch,
            distribution,
        } = self;
        kernel.escape_text();
        kernel_version.escape_text();
        arch.escape_text();
        distribution.escape_text();
    }
}

impl EscapeText for Virtualization {
    fn escape_text(&mut self) {
        let Virtualization {
            hypervisor,
            container,
        } = self;
        hypervisor.escape_text();
        container.escape_text();
    }
}

impl EscapeText for FilesystemInfo {
    fn escape_text(&mut self) {
        let FilesystemInfo {
            path,
            mount_point,
            fs_type,
            mount_options,
            source,
            block_device,
            rotational: _,
            scheduler,
            total_bytes: _,
            free_bytes: _,
        } = self;
        path.escape_text();
        mount_point.escape_text();
        fs_type.escape_text();
        mount_options.escape_text();
        source.escape_text();
        block_device.escape_text();
        scheduler.escape_text();
    }
}

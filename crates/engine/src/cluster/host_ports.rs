//! Host ports: which (host IP, protocol, port) triples a pod asks for or a node already has in use.

use crate::cluster::objects::Pod;

/// The wildcard host IP: a port bound on it conflicts with the same port on every IP.
pub const ANY_IP: &str = "0.0.0.0";

/// One host port a container binds.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct HostPort {
    pub ip: String,
    /// `TCP`, `UDP` or `SCTP`.
    pub protocol: String,
    pub port: i32,
}

impl HostPort {
    /// Whether the two cannot both be bound on one node: same protocol and port, and the same IP
    /// or either one the wildcard.
    pub fn conflicts_with(&self, other: &HostPort) -> bool {
        self.port == other.port
            && self.protocol == other.protocol
            && (self.ip == other.ip || self.ip == ANY_IP || other.ip == ANY_IP)
    }
}

/// The host ports of a pod's containers (sidecar init containers too, as they keep running).
/// Ports with no `hostPort` (or 0) are not host ports. The protocol defaults to TCP and the host
/// IP to 0.0.0.0, as the API server's defaulting does.
pub fn pod_host_ports(pod: &Pod) -> Vec<HostPort> {
    let sidecars = pod.spec.init_containers.iter().filter(|c| c.is_sidecar());
    pod.spec
        .containers
        .iter()
        .chain(sidecars)
        .flat_map(|c| &c.ports)
        .filter_map(|p| {
            let port = p.host_port.filter(|&hp| hp > 0)?;
            Some(HostPort {
                ip: p.host_ip.clone().filter(|ip| !ip.is_empty()).unwrap_or_else(|| ANY_IP.to_string()),
                protocol: p.protocol.clone().filter(|pr| !pr.is_empty()).unwrap_or_else(|| "TCP".to_string()),
                port,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::PodBuilder;

    fn hp(ip: &str, protocol: &str, port: i32) -> HostPort {
        HostPort { ip: ip.to_string(), protocol: protocol.to_string(), port }
    }

    #[test]
    fn conflicts() {
        let cases = [
            (hp("0.0.0.0", "TCP", 80), hp("0.0.0.0", "TCP", 80), true),
            (hp("0.0.0.0", "TCP", 80), hp("10.0.0.1", "TCP", 80), true),
            (hp("10.0.0.1", "TCP", 80), hp("0.0.0.0", "TCP", 80), true),
            (hp("10.0.0.1", "TCP", 80), hp("10.0.0.2", "TCP", 80), false),
            (hp("10.0.0.1", "TCP", 80), hp("10.0.0.1", "TCP", 80), true),
            (hp("0.0.0.0", "TCP", 80), hp("0.0.0.0", "UDP", 80), false),
            (hp("0.0.0.0", "TCP", 80), hp("0.0.0.0", "TCP", 81), false),
        ];
        for (a, b, want) in cases {
            assert_eq!(a.conflicts_with(&b), want, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn defaults_protocol_and_ip_and_skips_container_only_ports() {
        let mut pod = PodBuilder::new("p").host_port(8080, "", "").host_port(53, "UDP", "10.1.2.3").build();
        pod.spec.containers[0]
            .ports
            .push(k8s_openapi::api::core::v1::ContainerPort { container_port: 9090, ..Default::default() });
        assert_eq!(pod_host_ports(&pod), vec![hp("0.0.0.0", "TCP", 8080), hp("10.1.2.3", "UDP", 53)]);
    }
}

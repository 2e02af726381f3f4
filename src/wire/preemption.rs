//! `ExtenderPreemptionArgs`: the pod to place and, per candidate node, the victims kube-scheduler
//! chose: full pods in `NodeNameToVictims` (older schedulers: `nodeToVictims`) or, for a
//! `nodeCacheCapable` extender, UIDs in `NodeNameToMetaVictims`.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

use crate::wire::fields::{Fields, WireError};
use predicate_engine::cluster::objects::{Object, Pod};

/// The victims on one node.
#[derive(Debug, Clone)]
pub struct Victims {
    /// The victims' UIDs (from full pods, or as sent).
    pub pod_uids: Vec<String>,
    /// The full victim pods, when sent (`NodeNameToVictims`).
    pub pods: Option<Vec<Pod>>,
    pub num_pdb_violations: i64,
}

/// A decoded `ExtenderPreemptionArgs`.
#[derive(Debug)]
pub struct ExtenderPreemptionArgs {
    pub pod: Pod,
    /// Candidate nodes and their victims, from whichever form the request used.
    pub node_victims: BTreeMap<String, Victims>,
}

impl ExtenderPreemptionArgs {
    pub fn decode(body: &[u8]) -> Result<Self, WireError> {
        const AT: &str = "ExtenderPreemptionArgs";
        let fields = Fields::parse(body, AT)?;
        let pod = fields
            .decode::<Object<Pod>>(AT, "Pod")?
            .ok_or_else(|| WireError::new("ExtenderPreemptionArgs.Pod", "missing field"))?
            .0;
        // kube-scheduler 1.13 and older named the full-pod map nodeToVictims.
        let full = fields.get("NodeNameToVictims").map(|r| ("NodeNameToVictims", r));
        let full = full.or_else(|| fields.get("NodeToVictims").map(|r| ("NodeToVictims", r)));
        let meta = fields.get("NodeNameToMetaVictims");
        let node_victims = match (full, meta) {
            (Some(_), Some(_)) => {
                return Err(WireError::new(AT, "both NodeNameToVictims and NodeNameToMetaVictims are set; send one"))
            }
            (Some((name, raw)), None) => decode_victims(raw, &format!("{AT}.{name}"), true)?,
            (None, Some(raw)) => decode_victims(raw, &format!("{AT}.NodeNameToMetaVictims"), false)?,
            (None, None) => BTreeMap::new(),
        };
        Ok(ExtenderPreemptionArgs { pod, node_victims })
    }
}

fn decode_victims(raw: &RawValue, at: &str, full_pods: bool) -> Result<BTreeMap<String, Victims>, WireError> {
    let nodes: BTreeMap<String, &RawValue> = decode_borrowed(raw, at)?;
    let mut out = BTreeMap::new();
    for (node, raw) in nodes {
        let at = format!("{at}.{node}");
        if raw.get() == "null" {
            out.insert(node, Victims { pod_uids: Vec::new(), pods: full_pods.then(Vec::new), num_pdb_violations: 0 });
            continue;
        }
        let fields = Fields::parse(raw.get().as_bytes(), &at)?;
        let num_pdb_violations = fields.decode::<i64>(&at, "NumPDBViolations")?.unwrap_or(0);
        let victims = if full_pods {
            let pods: Vec<Pod> =
                fields.decode::<Vec<Object<Pod>>>(&at, "Pods")?.unwrap_or_default().into_iter().map(|o| o.0).collect();
            Victims {
                pod_uids: pods.iter().map(|p| p.metadata.uid.clone()).collect(),
                pods: Some(pods),
                num_pdb_violations,
            }
        } else {
            let metas: Vec<&RawValue> = match fields.get("Pods") {
                Some(raw) => decode_borrowed(raw, &format!("{at}.Pods"))?,
                None => Vec::new(),
            };
            let mut uids = Vec::with_capacity(metas.len());
            for (i, meta) in metas.into_iter().enumerate() {
                let pod_at = format!("{at}.Pods[{i}]");
                let meta_fields = Fields::parse(meta.get().as_bytes(), &pod_at)?;
                let uid = meta_fields.string(&pod_at, "UID")?;
                if uid.is_empty() {
                    return Err(WireError::new(format!("{pod_at}.UID"), "missing field"));
                }
                uids.push(uid);
            }
            Victims { pod_uids: uids, pods: None, num_pdb_violations }
        };
        out.insert(node, victims);
    }
    Ok(out)
}

/// Decodes JSON that keeps borrowing from `raw` (maps and lists of raw values).
fn decode_borrowed<'a, T: serde::Deserialize<'a>>(raw: &'a RawValue, at: &str) -> Result<T, WireError> {
    serde_json::from_str(raw.get()).map_err(|e| WireError::new(at, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_victims_in_both_casings() {
        for body in [
            r#"{"Pod":{"metadata":{"name":"p"}},"NodeNameToVictims":null,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"},{"UID":"u2"}],"NumPDBViolations":1},"n2":{"Pods":[],"NumPDBViolations":0}}}"#,
            r#"{"pod":{"metadata":{"name":"p"}},"nodenametometavictims":{"n1":{"pods":[{"uid":"u1"},{"uid":"u2"}],"numpdbviolations":1},"n2":{"pods":null}}}"#,
        ] {
            let args = ExtenderPreemptionArgs::decode(body.as_bytes()).unwrap();
            assert_eq!(args.pod.metadata.name, "p");
            assert_eq!(args.node_victims["n1"].pod_uids, ["u1", "u2"]);
            assert_eq!(args.node_victims["n1"].num_pdb_violations, 1);
            assert!(args.node_victims["n2"].pod_uids.is_empty());
        }
    }

    #[test]
    fn full_victims_in_both_names() {
        for key in ["NodeNameToVictims", "nodeToVictims"] {
            let body = format!(
                r#"{{"Pod":{{}},"{key}":{{"n1":{{"Pods":[{{"metadata":{{"name":"v","uid":"u9"}}}}],"NumPDBViolations":2}}}}}}"#
            );
            let args = ExtenderPreemptionArgs::decode(body.as_bytes()).unwrap();
            let v = &args.node_victims["n1"];
            assert_eq!(v.pod_uids, ["u9"]);
            assert_eq!(v.pods.as_ref().map(Vec::len), Some(1));
            assert_eq!(v.num_pdb_violations, 2);
        }
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (r#"{"NodeNameToMetaVictims":{}}"#, "ExtenderPreemptionArgs.Pod: missing field"),
            (r#"{"Pod":{},"NodeNameToMetaVictims":{"n1":{"Pods":[{}]}}}"#, "ExtenderPreemptionArgs.NodeNameToMetaVictims.n1.Pods[0].UID: missing field"),
            (r#"{"Pod":{},"NodeNameToMetaVictims":{"n1":{"NumPDBViolations":"x"}}}"#, "ExtenderPreemptionArgs.NodeNameToMetaVictims.n1.NumPDBViolations: invalid type: string \"x\", expected i64"),
            (r#"{"Pod":{},"NodeNameToVictims":{},"NodeNameToMetaVictims":{}}"#, "ExtenderPreemptionArgs: both NodeNameToVictims and NodeNameToMetaVictims are set; send one"),
        ];
        for (body, want) in cases {
            assert_eq!(ExtenderPreemptionArgs::decode(body.as_bytes()).unwrap_err().to_string(), want, "{body}");
        }
    }
}

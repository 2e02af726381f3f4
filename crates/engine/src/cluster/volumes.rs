//! The volume objects the volume predicates resolve pod volumes through: PersistentVolumeClaims,
//! PersistentVolumes, StorageClasses and CSINodes.

use std::sync::Arc;

use crate::hashing::PersistentHashMap as HashMap;
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};

/// The volume objects of the cluster; cloning is cheap (persistent maps).
#[derive(Debug, Clone, Default)]
pub struct VolumeObjects {
    pvs: HashMap<String, Arc<PersistentVolume>>,
    /// By namespace, then name, so a lookup borrows its key instead of building one.
    pvcs: HashMap<String, HashMap<String, Arc<PersistentVolumeClaim>>>,
    storage_classes: HashMap<String, Arc<StorageClass>>,
    csi_nodes: HashMap<String, Arc<CSINode>>,
}

fn name_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> String {
    meta.name.clone().unwrap_or_default()
}

impl VolumeObjects {
    pub fn pv(&self, name: &str) -> Option<&Arc<PersistentVolume>> {
        self.pvs.get(name)
    }

    pub fn pvc(&self, namespace: &str, name: &str) -> Option<&Arc<PersistentVolumeClaim>> {
        self.pvcs.get(namespace)?.get(name)
    }

    pub fn storage_class(&self, name: &str) -> Option<&Arc<StorageClass>> {
        self.storage_classes.get(name)
    }

    /// The CSINode of a node (same name as the node).
    pub fn csi_node(&self, node: &str) -> Option<&Arc<CSINode>> {
        self.csi_nodes.get(node)
    }

    /// Every PersistentVolume (CheckVolumeBinding looks for one to bind an unbound claim to).
    pub fn pvs(&self) -> impl Iterator<Item = &Arc<PersistentVolume>> {
        self.pvs.values()
    }

    pub fn upsert_pv(&mut self, pv: PersistentVolume) {
        self.pvs.insert(name_of(&pv.metadata), Arc::new(pv));
    }

    pub fn upsert_pvc(&mut self, pvc: PersistentVolumeClaim) {
        let namespace = pvc.metadata.namespace.clone().unwrap_or_default();
        let mut claims = self.pvcs.get(&namespace).cloned().unwrap_or_default();
        claims.insert(name_of(&pvc.metadata), Arc::new(pvc));
        self.pvcs.insert(namespace, claims);
    }

    pub fn upsert_storage_class(&mut self, sc: StorageClass) {
        self.storage_classes.insert(name_of(&sc.metadata), Arc::new(sc));
    }

    pub fn upsert_csi_node(&mut self, csi: CSINode) {
        self.csi_nodes.insert(name_of(&csi.metadata), Arc::new(csi));
    }

    pub fn remove_pv(&mut self, name: &str) {
        self.pvs.remove(name);
    }

    pub fn remove_pvc(&mut self, namespace: &str, name: &str) {
        let Some(mut claims) = self.pvcs.get(namespace).cloned() else { return };
        claims.remove(name);
        if claims.is_empty() {
            self.pvcs.remove(namespace);
        } else {
            self.pvcs.insert(namespace.to_string(), claims);
        }
    }

    pub fn remove_storage_class(&mut self, name: &str) {
        self.storage_classes.remove(name);
    }

    pub fn remove_csi_node(&mut self, name: &str) {
        self.csi_nodes.remove(name);
    }

    /// How many objects of a volume kind there are (0 for other kinds).
    pub fn count(&self, kind: crate::cluster::ObjectKind) -> usize {
        use crate::cluster::ObjectKind;
        match kind {
            ObjectKind::PersistentVolume => self.pvs.len(),
            ObjectKind::StorageClass => self.storage_classes.len(),
            ObjectKind::CSINode => self.csi_nodes.len(),
            ObjectKind::PersistentVolumeClaim => self.pvcs.values().map(|claims| claims.len()).sum(),
            _ => 0,
        }
    }

    /// The `(namespace, name)` of every object of a volume kind (`None` for other kinds).
    pub fn keys(&self, kind: crate::cluster::ObjectKind) -> Option<Vec<crate::cluster::ObjectKey>> {
        use crate::cluster::ObjectKind;
        let cluster_scoped = |names: Vec<&String>| names.into_iter().map(|n| (String::new(), n.clone())).collect();
        Some(match kind {
            ObjectKind::PersistentVolume => cluster_scoped(self.pvs.keys().collect()),
            ObjectKind::StorageClass => cluster_scoped(self.storage_classes.keys().collect()),
            ObjectKind::CSINode => cluster_scoped(self.csi_nodes.keys().collect()),
            ObjectKind::PersistentVolumeClaim => self
                .pvcs
                .iter()
                .flat_map(|(ns, claims)| claims.keys().map(move |name| (ns.clone(), name.clone())))
                .collect(),
            _ => return None,
        })
    }
}

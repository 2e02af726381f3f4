//! Every function of the C ABI, called as the Go plugin calls it (raw pointers, caller buffers),
//! with good input and bad: a wrong argument or a pod that does not decode is an error code and a
//! message, never a crash.
#![allow(unsafe_code)] // calling the ABI is unsafe by its nature; the calls below keep its rules
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: a panic is how it fails

use std::ptr::{null, null_mut};

use predicate_engine_ffi::abi::*;

/// A caller-owned buffer and the text written into it.
struct Buf(Vec<u8>, PeOut);

impl Buf {
    fn new(cap: usize) -> Box<Buf> {
        let mut b = Box::new(Buf(vec![0; cap], PeOut { ptr: null_mut(), cap, len: 0 }));
        b.1.ptr = b.0.as_mut_ptr();
        b
    }
    fn out(&mut self) -> *mut PeOut {
        &mut self.1
    }
    fn text(&self) -> String {
        String::from_utf8(self.0[..self.1.len].to_vec()).unwrap()
    }
}

const NODE_A: &str = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"a","labels":{"zone":"z1"},"resourceVersion":"1"},
  "status":{"allocatable":{"cpu":"2","memory":"4Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}}"#;
const NODE_B: &str = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"b","labels":{"zone":"z2"},"resourceVersion":"1"},
  "spec":{"taints":[{"key":"dedicated","value":"x","effect":"NoSchedule"}]},
  "status":{"allocatable":{"cpu":"2","memory":"4Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}}"#;
const NODE_C: &str = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"c","resourceVersion":"1"},
  "status":{"allocatable":{"cpu":"1","memory":"4Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}}"#;

fn pod(name: &str, rv: &str, cpu: &str, node: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}","namespace":"default","uid":"u-{name}","resourceVersion":"{rv}"}},
  "spec":{{"nodeName":"{node}","schedulerName":"default-scheduler","containers":[{{"name":"c","image":"i","resources":{{"requests":{{"cpu":"{cpu}"}}}}}}]}},
  "status":{{"phase":"Pending"}}}}"#
    )
}

fn engine_with(config: &str) -> *mut PeEngine {
    let mut err = Buf::new(512);
    let engine = unsafe { pe_engine_new(config.as_ptr(), config.len(), err.out()) };
    assert!(!engine.is_null(), "{}", err.text());
    engine
}

fn upsert(engine: *const PeEngine, kind: u32, json: &str) -> i32 {
    let mut err = Buf::new(512);
    let code = unsafe { pe_upsert(engine, kind, json.as_ptr(), json.len(), err.out()) };
    assert!(code == PE_OK || !err.text().is_empty(), "an error says why");
    code
}

/// The engine with three nodes: `a` fits, `b` is tainted, `c` has 1 cpu.
fn cluster() -> *mut PeEngine {
    let engine = engine_with(r#"{"schedulerVersion":"v1.37.2","parallelism":1}"#);
    for node in [NODE_A, NODE_B, NODE_C] {
        assert_eq!(upsert(engine, 0, node), PE_OK);
    }
    engine
}

fn cycle(engine: *const PeEngine, name: &str, rv: &str, json: Option<&str>) -> (*mut PeCycle, i32, String) {
    let mut err = Buf::new(512);
    let mut status = 99;
    let (ns, (pod, pod_len)) = ("default", json.map_or((null(), 0), |j| (j.as_ptr(), j.len())));
    let c = unsafe {
        pe_cycle_new(
            engine,
            ns.as_ptr(),
            ns.len(),
            name.as_ptr(),
            name.len(),
            rv.as_ptr(),
            rv.len(),
            pod,
            pod_len,
            &mut status,
            err.out(),
        )
    };
    (c, status, err.text())
}

fn filter(c: *const PeCycle, node: &str) -> (i32, String) {
    let mut reason = Buf::new(256);
    let code = unsafe { pe_filter(c, node.as_ptr(), node.len(), reason.out()) };
    (code, reason.text())
}

#[test]
fn engine_new_takes_settings_and_refuses_bad_ones_with_the_reason() {
    let e = engine_with("{}");
    unsafe { pe_engine_free(e) };
    for (config, says) in [
        ("not json", "the engine's settings"),
        (r#"{"policy":"/nonexistent/policy.yaml"}"#, "/nonexistent/policy.yaml"),
        (r#"{"schedulerVersion":"v1.20.0"}"#, "1.20"),
        (r#"{"polcy":"x"}"#, "unknown field `polcy`"),
    ] {
        let mut err = Buf::new(512);
        let e = unsafe { pe_engine_new(config.as_ptr(), config.len(), err.out()) };
        assert!(e.is_null(), "{config}");
        assert!(err.text().contains(says), "{config}: {}", err.text());
    }
    // A null pointer with a length, and no error buffer at all: still refused, nothing written.
    let e = unsafe { pe_engine_new(null(), 5, null_mut()) };
    assert!(e.is_null());
    // Freeing null is nothing.
    unsafe { pe_engine_free(null_mut()) };
}

#[test]
fn filter_answers_per_node_from_the_model_and_the_pod_passed_once() {
    let engine = cluster();
    // The model has not seen the pod: the plugin is asked for it.
    let (c, status, _) = cycle(engine, "p", "7", None);
    assert!(c.is_null());
    assert_eq!(status, PE_NEED_POD);
    // Passed as JSON: a cycle.
    let p = pod("p", "7", "1500m", "");
    let (c, status, err) = cycle(engine, "p", "7", Some(&p));
    assert_eq!(status, PE_OK, "{err}");
    assert_eq!(filter(c, "a"), (PE_FITS, String::new()));
    let (code, reason) = filter(c, "b");
    assert_eq!(code, PE_UNRESOLVABLE);
    assert!(reason == "node(s) had taints that the pod didn't tolerate", "{reason}");
    assert_eq!(filter(c, "c"), (PE_UNSCHEDULABLE, "Insufficient cpu".to_string()));
    let (code, reason) = filter(c, "nowhere");
    assert_eq!(code, PE_UNKNOWN_NODE);
    assert!(reason.contains("not in the in-process engine's cluster model"), "{reason}");
    unsafe { pe_cycle_free(c) };

    // Once the informer has delivered it, the key and resourceVersion are enough.
    assert_eq!(upsert(engine, 1, &p), PE_OK);
    let (c, status, _) = cycle(engine, "p", "7", None);
    assert_eq!(status, PE_OK);
    assert_eq!(filter(c, "a").0, PE_FITS);
    unsafe { pe_cycle_free(c) };
    // Another version than the model's: the pod is asked for again.
    let (c, status, _) = cycle(engine, "p", "8", None);
    assert!(c.is_null());
    assert_eq!(status, PE_NEED_POD);
    unsafe { pe_engine_free(engine) };
}

#[test]
fn a_pod_that_does_not_decode_is_an_error_for_the_plugin() {
    let engine = cluster();
    for (bad, says) in [
        ("{", "EOF"),
        (
            r#"{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"lots"}}}]}}"#,
            "lots",
        ),
        ("[1,2]", "p does not decode"),
    ] {
        let (c, status, err) = cycle(engine, "p", "1", Some(bad));
        assert!(c.is_null());
        assert_eq!(status, PE_ERROR);
        assert!(err.contains("default/p does not decode") && err.contains(says), "{bad}: {err}");
    }
    // Not UTF-8 in a name; a null engine.
    let mut err = Buf::new(256);
    let mut status = 0;
    let name = [0xff_u8, 0xfe];
    let c = unsafe { pe_cycle_new(engine, null(), 0, name.as_ptr(), 2, null(), 0, null(), 0, &mut status, err.out()) };
    assert!(c.is_null());
    assert_eq!(status, PE_ERROR);
    assert!(err.text().contains("the name is not UTF-8"), "{}", err.text());
    let c = unsafe { pe_cycle_new(null(), null(), 0, null(), 0, null(), 0, null(), 0, null_mut(), err.out()) };
    assert!(c.is_null());
    assert_eq!(err.text(), "a null engine");
    unsafe { pe_engine_free(engine) };
}

#[test]
fn upsert_and_delete_refuse_unknown_kinds_and_bad_objects() {
    let engine = cluster();
    assert_eq!(upsert(engine, 11, NODE_A), PE_ERROR);
    assert_eq!(upsert(engine, 0, "{\"metadata\":"), PE_ERROR);
    let mut err = Buf::new(512);
    let json = r#"{"metadata":{"name":"x"},"status":{"allocatable":{"cpu":"-"}}}"#;
    assert_eq!(unsafe { pe_upsert(engine, 0, json.as_ptr(), json.len(), err.out()) }, PE_ERROR);
    assert!(err.text().contains("a nodes from the informer"), "{}", err.text());
    // Every kind the model keeps decodes.
    for (kind, json) in [
        (2, r#"{"metadata":{"name":"ns","labels":{"team":"a"}}}"#),
        (3, r#"{"metadata":{"name":"s","namespace":"default"},"spec":{"selector":{"app":"a"}}}"#),
        (4, r#"{"metadata":{"name":"pv"},"spec":{"capacity":{"storage":"1Gi"}}}"#),
        (5, r#"{"metadata":{"name":"pvc","namespace":"default"},"spec":{}}"#),
        (6, r#"{"metadata":{"name":"sc"},"provisioner":"x"}"#),
        (7, r#"{"metadata":{"name":"a"},"spec":{"drivers":[]}}"#),
        (8, r#"{"metadata":{"name":"rs","namespace":"default"},"spec":{"selector":{}}}"#),
        (9, r#"{"metadata":{"name":"rc","namespace":"default"},"spec":{}}"#),
        (10, r#"{"metadata":{"name":"ss","namespace":"default"},"spec":{"selector":{},"template":{}}}"#),
    ] {
        assert_eq!(upsert(engine, kind, json), PE_OK, "kind {kind}: {json}");
    }
    // A delete takes the node out of the model.
    let (ns, name) = ("", "a");
    assert_eq!(unsafe { pe_delete(engine, 0, ns.as_ptr(), 0, name.as_ptr(), name.len(), err.out()) }, PE_OK);
    let p = pod("q", "1", "100m", "");
    let (c, _, _) = cycle(engine, "q", "1", Some(&p));
    assert_eq!(filter(c, "a").0, PE_UNKNOWN_NODE);
    unsafe { pe_cycle_free(c) };
    assert_eq!(unsafe { pe_delete(engine, 42, ns.as_ptr(), 0, name.as_ptr(), 1, err.out()) }, PE_ERROR);
    assert!(err.text().contains("unknown object kind 42"), "{}", err.text());
    unsafe { pe_engine_free(engine) };
}

#[test]
fn score_fills_one_score_per_name_and_checks_the_count() {
    let engine = cluster();
    // `a` holds a pod already: LeastRequested prefers the empty `b`.
    assert_eq!(upsert(engine, 1, &pod("busy", "1", "1500m", "a")), PE_OK);
    let p = pod("p", "7", "100m", "");
    let (c, _, _) = cycle(engine, "p", "7", Some(&p));
    let names = "a\nb";
    let mut scores = [-1_i64; 2];
    let mut err = Buf::new(256);
    let code = unsafe { pe_score(engine, c, names.as_ptr(), names.len(), scores.as_mut_ptr(), 2, err.out()) };
    assert_eq!(code, PE_OK, "{}", err.text());
    assert!(scores.iter().all(|s| (0..=10).contains(s)), "{scores:?}");
    assert!(scores[1] > scores[0], "{scores:?}");
    // Three slots for two names; a null array; no names at all.
    let mut three = [0_i64; 3];
    assert_eq!(unsafe { pe_score(engine, c, names.as_ptr(), names.len(), three.as_mut_ptr(), 3, err.out()) }, PE_ERROR);
    assert_eq!(err.text(), "2 node names and room for 3 scores");
    assert_eq!(unsafe { pe_score(engine, c, names.as_ptr(), names.len(), null_mut(), 2, err.out()) }, PE_ERROR);
    assert_eq!(unsafe { pe_score(engine, c, null(), 0, null_mut(), 0, err.out()) }, PE_OK);
    assert_eq!(unsafe { pe_score(engine, null(), names.as_ptr(), 1, scores.as_mut_ptr(), 1, err.out()) }, PE_ERROR);
    unsafe { pe_cycle_free(c) };
    unsafe { pe_engine_free(engine) };
}

#[test]
fn reserve_counts_the_pod_until_unreserve() {
    let engine = cluster();
    let p = pod("big", "3", "1500m", "");
    assert_eq!(upsert(engine, 1, &p), PE_OK);
    let (c, _, _) = cycle(engine, "big", "3", None);
    let mut err = Buf::new(256);
    let node = "a";
    assert_eq!(unsafe { pe_reserve(engine, c, node.as_ptr(), 1, err.out()) }, PE_OK);
    unsafe { pe_cycle_free(c) };
    // Another 1500m pod no longer fits on `a` (2 cpu).
    let other = pod("other", "4", "1500m", "");
    let (c, _, _) = cycle(engine, "other", "4", Some(&other));
    assert_eq!(filter(c, "a").0, PE_UNSCHEDULABLE);
    unsafe { pe_cycle_free(c) };
    let (ns, name) = ("default", "big");
    let code =
        unsafe { pe_unreserve(engine, ns.as_ptr(), ns.len(), name.as_ptr(), name.len(), node.as_ptr(), 1, err.out()) };
    assert_eq!(code, PE_OK);
    let (c, _, _) = cycle(engine, "other", "4", Some(&other));
    assert_eq!(filter(c, "a").0, PE_FITS);
    // Bad arguments.
    assert_eq!(unsafe { pe_reserve(engine, null(), node.as_ptr(), 1, err.out()) }, PE_ERROR);
    assert_eq!(err.text(), "a null cycle");
    assert_eq!(unsafe { pe_unreserve(engine, null(), 3, name.as_ptr(), 3, node.as_ptr(), 1, err.out()) }, PE_ERROR);
    assert!(err.text().contains("the namespace: a null pointer with length 3"), "{}", err.text());
    unsafe { pe_cycle_free(c) };
    unsafe { pe_engine_free(engine) };
}

#[test]
fn tick_reloads_a_changed_policy_and_keeps_the_old_one_when_it_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("policy.json");
    std::fs::write(&path, r#"{"kind":"Policy","apiVersion":"v1","predicates":[{"name":"PodFitsResources"}]}"#).unwrap();
    let config = serde_json::json!({ "policy": path }).to_string();
    let engine = engine_with(&config);
    for node in [NODE_A, NODE_B] {
        assert_eq!(upsert(engine, 0, node), PE_OK);
    }
    let p = pod("p", "1", "100m", "");
    let verdict_on_b = || {
        let (c, _, _) = cycle(engine, "p", "1", Some(&p));
        let verdict = filter(c, "b").0;
        unsafe { pe_cycle_free(c) };
        verdict
    };
    // The taint predicate is mandatory in every Policy.
    assert_eq!(verdict_on_b(), PE_UNRESOLVABLE);
    let mut err = Buf::new(512);
    assert_eq!(unsafe { pe_engine_tick(engine, err.out()) }, PE_OK);
    std::fs::write(&path, r#"{"kind":"Policy","apiVersion":"v1","predicates":[{"name":"NoSuchPredicate"}]}"#).unwrap();
    assert_eq!(unsafe { pe_engine_tick(engine, err.out()) }, PE_ERROR);
    assert!(err.text().contains("NoSuchPredicate"), "{}", err.text());
    // Reported once: the next tick finds the same broken file unchanged.
    assert_eq!(unsafe { pe_engine_tick(engine, err.out()) }, PE_OK);
    assert_eq!(verdict_on_b(), PE_UNRESOLVABLE);
    std::fs::write(&path, r#"{"kind":"Policy","apiVersion":"v1","predicates":[{"name":"HostName"}]}"#).unwrap();
    assert_eq!(unsafe { pe_engine_tick(engine, err.out()) }, PE_RELOADED);
    assert_eq!(unsafe { pe_engine_tick(null(), err.out()) }, PE_ERROR);
    unsafe { pe_engine_free(engine) };
}

#[test]
fn messages_are_cut_to_the_buffer_at_a_character_boundary() {
    let engine = cluster();
    // "é" is two bytes: the message "the pod default/é…" cut at 17 bytes keeps 16, not half an "é".
    let (ns, name, bad) = ("default", "é", "{");
    let mut small = Buf::new(17);
    let mut status = 0;
    let c = unsafe {
        pe_cycle_new(
            engine,
            ns.as_ptr(),
            ns.len(),
            name.as_ptr(),
            name.len(),
            null(),
            0,
            bad.as_ptr(),
            1,
            &mut status,
            small.out(),
        )
    };
    assert!(c.is_null());
    assert_eq!(status, PE_ERROR);
    assert_eq!(small.text(), "the pod default/");
    let p = pod("p", "1", "1500m", "");
    let (c, _, _) = cycle(engine, "p", "1", Some(&p));
    let mut tiny = Buf::new(3);
    let node = "c";
    assert_eq!(unsafe { pe_filter(c, node.as_ptr(), 1, tiny.out()) }, PE_UNSCHEDULABLE);
    assert_eq!(tiny.text(), "Ins");
    let mut none = Buf::new(0);
    assert_eq!(unsafe { pe_filter(c, node.as_ptr(), 1, none.out()) }, PE_UNSCHEDULABLE);
    assert_eq!(none.1.len, 0);
    assert_eq!(unsafe { pe_filter(c, node.as_ptr(), 1, null_mut()) }, PE_UNSCHEDULABLE);
    assert_eq!(unsafe { pe_filter(null(), node.as_ptr(), 1, null_mut()) }, PE_ERROR);
    unsafe { pe_cycle_free(c) };
    unsafe { pe_cycle_free(null_mut()) };
    unsafe { pe_engine_free(engine) };
}

fn filter_adjusted(c: *const PeCycle, node: &str, removed: &str, added: &str) -> (i32, String) {
    let mut reason = Buf::new(256);
    let code = unsafe {
        pe_filter_adjusted(
            c,
            node.as_ptr(),
            node.len(),
            removed.as_ptr(),
            removed.len(),
            added.as_ptr(),
            added.len(),
            reason.out(),
        )
    };
    (code, reason.text())
}

#[test]
fn filter_adjusted_sees_the_node_as_preemption_and_the_double_pass_change_it() {
    let engine = cluster();
    // `c` (1 cpu) runs an 800m victim; `nom` (600m) waits, not yet on a node.
    assert_eq!(upsert(engine, 1, &pod("victim", "1", "800m", "c")), PE_OK);
    assert_eq!(upsert(engine, 1, &pod("nom", "1", "600m", "")), PE_OK);
    let p = pod("p", "1", "500m", "");
    let (c, _, _) = cycle(engine, "p", "1", Some(&p));
    assert_eq!(filter(c, "c"), (PE_UNSCHEDULABLE, "Insufficient cpu".to_string()));
    // The victim gone: fits. Removed and added back (spared): as it was.
    assert_eq!(filter_adjusted(c, "c", "default/victim", ""), (PE_FITS, String::new()));
    assert_eq!(filter_adjusted(c, "c", "default/victim", "default/victim").0, PE_UNSCHEDULABLE);
    // Nothing changed: as `pe_filter`.
    assert_eq!(filter_adjusted(c, "a", "", "").0, PE_FITS);
    // The nominated 600m pod added to `c` with the victim gone: 1100m of 1 cpu.
    assert_eq!(filter_adjusted(c, "c", "default/victim", "default/nom").0, PE_UNSCHEDULABLE);
    // Pods the model does not know change nothing; a key without a namespace is an error.
    assert_eq!(filter_adjusted(c, "c", "default/ghost", "").0, PE_UNSCHEDULABLE);
    let (code, reason) = filter_adjusted(c, "c", "victim", "");
    assert_eq!(code, PE_ERROR);
    assert!(reason.contains("the removed pod \"victim\" is not namespace/name"), "{reason}");
    assert_eq!(filter_adjusted(c, "nowhere", "", "").0, PE_UNKNOWN_NODE);
    assert_eq!(filter_adjusted(null(), "c", "", "").0, PE_ERROR);
    unsafe { pe_cycle_free(c) };
    unsafe { pe_engine_free(engine) };
}

/// Raw pointers that the test hands to its threads: the ABI says an engine and a cycle serve many
/// threads at once.
#[derive(Clone, Copy)]
struct Shared(*mut PeEngine, *mut PeCycle);
unsafe impl Send for Shared {}

impl Shared {
    /// Taken whole (a closure naming the fields would capture the bare pointers).
    fn parts(self) -> (*mut PeEngine, *mut PeCycle) {
        (self.0, self.1)
    }
}

#[test]
fn one_cycle_serves_many_threads_while_the_informers_write_the_model() {
    let engine = cluster();
    let p = pod("p", "1", "1500m", "");
    let (c, _, _) = cycle(engine, "p", "1", Some(&p));
    let shared = Shared(engine, c);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            std::thread::spawn(move || {
                let (engine, c) = shared.parts();
                for i in 0..500 {
                    if t == 0 {
                        // An informer writing pods meanwhile: the cycle keeps the snapshot it began with.
                        assert_eq!(upsert(engine, 1, &pod(&format!("w-{i}"), "1", "100m", "a")), PE_OK);
                    }
                    assert_eq!(filter(c, "a"), (PE_FITS, String::new()));
                    assert_eq!(filter(c, "c"), (PE_UNSCHEDULABLE, "Insufficient cpu".to_string()));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    unsafe { pe_cycle_free(c) };
    // A new cycle sees the 500 pods the informer wrote (50 cpu on a 2-cpu node).
    let (c, _, _) = cycle(engine, "p", "1", None);
    assert!(c.is_null(), "the model has no `p` at version 1: it was never upserted");
    let (c, _, _) = cycle(engine, "p", "1", Some(&p));
    assert_eq!(filter(c, "a").0, PE_UNSCHEDULABLE);
    unsafe { pe_cycle_free(c) };
    unsafe { pe_engine_free(engine) };
}

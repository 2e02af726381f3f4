//! The Binding as kube-apiserver reads it cheapest: Kubernetes' protobuf encoding
//! (`application/vnd.kubernetes.protobuf`), which kube-scheduler's own binder sends. Decoding a
//! JSON Binding cost kube-apiserver about four times the CPU of a protobuf one
//! (docs/throughput.md, "The bind path").
//!
//! The wire form (k8s.io/apimachinery's `runtime/serializer/protobuf`): the four bytes `k8s\0`,
//! then a `runtime.Unknown` whose `typeMeta` names `v1`/`Binding` and whose `raw` is the Binding
//! message. Only the fields a binding sets are declared; the field numbers are those of
//! `k8s.io/api/core/v1/generated.proto` and `k8s.io/apimachinery/pkg/{runtime,apis/meta/v1}`.

use k8s_openapi::api::core::v1::Pod;
use kube::api::PostParams;
use kube::Resource;
use prost::Message;

/// What every protobuf-encoded Kubernetes object starts with.
const MAGIC: [u8; 4] = *b"k8s\0";

/// The Content-Type of a protobuf body.
pub const CONTENT_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// `runtime.TypeMeta`.
#[derive(Clone, PartialEq, Message)]
pub struct TypeMeta {
    #[prost(string, optional, tag = "1")]
    pub api_version: Option<String>,
    #[prost(string, optional, tag = "2")]
    pub kind: Option<String>,
}

/// `runtime.Unknown`: the envelope of every object.
#[derive(Clone, PartialEq, Message)]
pub struct Unknown {
    #[prost(message, optional, tag = "1")]
    pub type_meta: Option<TypeMeta>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub raw: Option<Vec<u8>>,
    #[prost(string, optional, tag = "3")]
    pub content_encoding: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub content_type: Option<String>,
}

/// `metav1.ObjectMeta`: the fields of a Binding's.
#[derive(Clone, PartialEq, Message)]
pub struct ObjectMeta {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub namespace: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub uid: Option<String>,
}

/// `corev1.ObjectReference`: the fields of a Binding's target.
#[derive(Clone, PartialEq, Message)]
pub struct ObjectReference {
    #[prost(string, optional, tag = "1")]
    pub kind: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub name: Option<String>,
}

/// `corev1.Binding`.
#[derive(Clone, PartialEq, Message)]
pub struct Binding {
    #[prost(message, optional, tag = "1")]
    pub metadata: Option<ObjectMeta>,
    #[prost(message, optional, tag = "2")]
    pub target: Option<ObjectReference>,
}

impl Binding {
    /// The Binding of pod `namespace/name` to `node`, with the pod's UID as a precondition when
    /// known (an empty `uid` sets none, as kube-scheduler's binder does for a pod without one).
    pub fn of(namespace: &str, name: &str, uid: &str, node: &str) -> Self {
        let set = |s: &str| Some(s.to_string());
        Binding {
            metadata: Some(ObjectMeta {
                name: set(name),
                namespace: set(namespace),
                uid: (!uid.is_empty()).then(|| uid.to_string()),
            }),
            target: Some(ObjectReference { kind: set("Node"), name: set(node) }),
        }
    }

    /// The request body: the magic, then the envelope around the Binding.
    pub fn encode_object(&self) -> Vec<u8> {
        let envelope = Unknown {
            type_meta: Some(TypeMeta { api_version: Some("v1".into()), kind: Some("Binding".into()) }),
            raw: Some(self.encode_to_vec()),
            content_encoding: None,
            content_type: None,
        };
        let mut body = Vec::with_capacity(MAGIC.len() + envelope.encoded_len());
        body.extend_from_slice(&MAGIC);
        envelope.encode(&mut body).unwrap_or_else(|_| unreachable!("a Vec grows to hold any message"));
        body
    }

    /// The `POST .../pods/{name}/binding` that creates it, for `kube::Client::request`: the
    /// Binding in protobuf, the answer (a `Status`, success or not) asked for in JSON. Fails only
    /// on a name that cannot be a path segment.
    pub fn request(&self) -> Result<http::Request<Vec<u8>>, kube::Error> {
        let meta = self.metadata.as_ref();
        let namespace = meta.and_then(|m| m.namespace.as_deref()).unwrap_or_default();
        let name = meta.and_then(|m| m.name.as_deref()).unwrap_or_default();
        for (what, segment) in [("namespace", namespace), ("pod name", name)] {
            path_segment(segment).map_err(|why| {
                kube::Error::BuildRequest(kube::core::request::Error::Validation(format!("{what} {segment:?} {why}")))
            })?;
        }
        let mut request = kube::core::Request::new(Pod::url_path(&(), Some(namespace)))
            .create_subresource("binding", name, &PostParams::default(), self.encode_object())
            .map_err(kube::Error::BuildRequest)?;
        let headers = request.headers_mut();
        headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(CONTENT_TYPE));
        headers.insert(http::header::ACCEPT, http::HeaderValue::from_static("application/json"));
        Ok(request)
    }

    /// Creates the Binding through `client` (one attempt; the caller decides about retries).
    pub async fn post(&self, client: &kube::Client) -> Result<(), kube::Error> {
        client.request::<serde_json::Value>(self.request()?).await.map(drop)
    }

    /// Reads a protobuf-encoded Binding (what an API server does with [`Binding::encode_object`]'s
    /// bytes); says what is wrong when they are not one.
    pub fn decode_object(body: &[u8]) -> Result<Self, String> {
        let rest = body.strip_prefix(&MAGIC).ok_or("the body does not start with the protobuf magic k8s\\0")?;
        let envelope = Unknown::decode(rest).map_err(|e| format!("not a runtime.Unknown: {e}"))?;
        let type_meta = envelope.type_meta.unwrap_or_default();
        let (api_version, kind) = (type_meta.api_version.unwrap_or_default(), type_meta.kind.unwrap_or_default());
        if (api_version.as_str(), kind.as_str()) != ("v1", "Binding") {
            return Err(format!("not a v1 Binding: apiVersion {api_version:?}, kind {kind:?}"));
        }
        Binding::decode(envelope.raw.unwrap_or_default().as_slice()).map_err(|e| format!("not a Binding: {e}"))
    }
}

/// Whether a name can be one segment of an API path, by the rule the API server applies to names
/// in paths (k8s.io/apimachinery `api/validation/path.IsValidPathSegmentName`).
fn path_segment(name: &str) -> Result<(), &'static str> {
    match name {
        "" => Err("is empty"),
        "." | ".." => Err("may not be '.' or '..'"),
        _ if name.contains(['/', '%']) => Err("may not contain '/' or '%'"),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What k8s.io/apimachinery v0.37.2's protobuf serializer writes for two Bindings
    /// (`protobuf.NewSerializer(scheme, scheme).Encode(binding, w)` with k8s.io/api/core/v1
    /// registered): the first `web-0` in `team-a` with a UID to `node-17`, the second `p` in
    /// `default` without one to `n1`. Go writes every field, the empty ones too; those decode to
    /// the empty value.
    const GO_ENCODED: [&str; 2] = [
        "6b3873000a0d0a027631120742696e64696e67125c0a3f0a057765622d3012001a067465616d2d6122002a2430623563366135322d376637652d346438652d396431622d32663061346331653961373732003800420012190a044e6f646512001a076e6f64652d313722002a0032003a001a002200",
        "6b3873000a0d0a027631120742696e64696e6712300a180a017012001a0764656661756c7422002a0032003800420012140a044e6f646512001a026e3122002a0032003a001a002200",
    ];

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    /// Reads the fields that matter, the empty ones Go writes as absent.
    fn fields(b: &Binding) -> [String; 5] {
        let meta = b.metadata.clone().unwrap_or_default();
        let target = b.target.clone().unwrap_or_default();
        [meta.name, meta.namespace, meta.uid, target.kind, target.name].map(Option::unwrap_or_default)
    }

    #[test]
    fn go_s_encoding_reads_as_the_binding_we_send() {
        let ours = [
            Binding::of("team-a", "web-0", "0b5c6a52-7f7e-4d8e-9d1b-2f0a4c1e9a77", "node-17"),
            Binding::of("default", "p", "", "n1"),
        ];
        for (go, ours) in GO_ENCODED.iter().zip(&ours) {
            let from_go = Binding::decode_object(&hex(go)).unwrap();
            assert_eq!(fields(&from_go), fields(ours));
            let round_trip = Binding::decode_object(&ours.encode_object()).unwrap();
            assert_eq!(&round_trip, ours);
        }
    }

    /// Ours is Go's second encoding above without the empty fields Go writes: the same envelope,
    /// tags and values.
    #[test]
    fn our_bytes_are_go_s_without_its_empty_fields() {
        let ours = Binding::of("default", "p", "", "n1").encode_object();
        let expected = hex(concat!(
            "6b387300", // k8s\0
            "0a0d",
            "0a027631",
            "120742696e64696e67", // typeMeta {apiVersion v1, kind Binding}
            "121a",               // raw, 26 bytes: the Binding
            "0a0c",
            "0a0170",
            "1a0764656661756c74", // metadata {name p, namespace default}
            "120a",
            "0a044e6f6465",
            "1a026e31", // target {kind Node, name n1}
        ));
        assert_eq!(ours, expected);
    }

    #[test]
    fn the_request_posts_protobuf_to_the_pod_s_binding_and_asks_for_json() {
        let binding = Binding::of("team-a", "web-0", "u-1", "node-17");
        let request = binding.request().unwrap();
        assert_eq!(request.method(), http::Method::POST);
        assert_eq!(request.uri().path(), "/api/v1/namespaces/team-a/pods/web-0/binding");
        assert_eq!(request.headers()[http::header::CONTENT_TYPE], CONTENT_TYPE);
        assert_eq!(request.headers()[http::header::ACCEPT], "application/json");
        assert_eq!(Binding::decode_object(request.body()).unwrap(), binding);
        for (namespace, name, says) in [
            ("default", "a/b", r#"pod name "a/b" may not contain '/' or '%'"#),
            ("..", "p", r#"namespace ".." may not be '.' or '..'"#),
            ("default", "", r#"pod name "" is empty"#),
        ] {
            let error = Binding::of(namespace, name, "", "n1").request().unwrap_err().to_string();
            assert!(error.contains(says), "{error}");
        }
    }

    #[test]
    fn what_is_not_a_binding_is_told() {
        assert!(Binding::decode_object(b"{\"kind\":\"Binding\"}").unwrap_err().contains("magic"));
        let mut pod = Binding::of("default", "p", "", "n1").encode_object();
        pod[12..19].copy_from_slice(b"Podding");
        assert!(Binding::decode_object(&pod).unwrap_err().contains("kind \"Podding\""));
    }
}

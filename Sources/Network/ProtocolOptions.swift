// Network's C API for protocol options, the part apps call without making a connection:
// `_ = nw_tls_create_options()` in an app's `init` or `didFinishLaunching` (a workaround
// many apps added with Xcode 26, which loads TLS early; found by an outside compile probe).
// Connections are URLSession's here (docs/porting.md, "Network paths"): the options are
// made and configure nothing.
import Foundation

/// Options of a protocol (Apple: Network's `nw_protocol_options_t`): opaque, as Apple's.
/// @unchecked Sendable: it holds nothing.
public final class nw_protocol_options_t: @unchecked Sendable {
    /// The protocol the options are for (`"tls"`, `"tcp"`, `"udp"`).
    let protocolName: String
    init(protocolName: String) { self.protocolName = protocolName }
}

/// Options of TLS (Apple: `nw_tls_create_options()`).
public func nw_tls_create_options() -> nw_protocol_options_t { nw_protocol_options_t(protocolName: "tls") }

/// Options of TCP (Apple: `nw_tcp_create_options()`).
public func nw_tcp_create_options() -> nw_protocol_options_t { nw_protocol_options_t(protocolName: "tcp") }

/// Options of UDP (Apple: `nw_udp_create_options()`).
public func nw_udp_create_options() -> nw_protocol_options_t { nw_protocol_options_t(protocolName: "udp") }

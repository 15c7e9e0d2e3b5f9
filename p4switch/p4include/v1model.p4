/*
 * v1model.p4 -- the v1model architecture (the P4_14 switch model expressed in P4-16), as
 * implemented by the p4switch software target and by the BMv2 simple_switch.
 *
 * Written for this project from the v1model documentation. Every type, extern, constant
 * and signature has the name and shape the reference compiler expects, so a program that
 * includes this file compiles unchanged with p4c --arch v1model.
 *
 * V1MODEL_VERSION selects between the original declarations (20180101, the default) and
 * the later ones (20200408) whose counters, meters and registers take a generic index type.
 */

#ifndef _V1_MODEL_P4_
#define _V1_MODEL_P4_

#include "core.p4"

#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif

/* Extra match kinds of this architecture. */
match_kind {
    range,     /* lo <= field <= hi */
    optional,  /* exact match or wildcard */
    selector   /* key fields hashed by an action selector */
}

const bit<32> __v1model_version = V1MODEL_VERSION;

#if V1MODEL_VERSION >= 20200408
typedef bit<9>  PortId_t;
#endif

/* Per-packet intrinsic metadata. Queueing timestamps are in microseconds, queue depths
 * count packets. */
@metadata @name("standard_metadata")
struct standard_metadata_t {
#if V1MODEL_VERSION >= 20200408
    PortId_t ingress_port;
    PortId_t egress_spec;    /* set by ingress: the output port (511 drops) */
    PortId_t egress_port;    /* the port the packet leaves on (read-only in egress) */
#else
    bit<9>  ingress_port;
    bit<9>  egress_spec;
    bit<9>  egress_port;
#endif
    bit<32> instance_type;   /* normal, clone, resubmit, recirculate, replication */
    bit<32> packet_length;   /* bytes, as received */
    @alias("queueing_metadata.enq_timestamp")
    bit<32> enq_timestamp;
    @alias("queueing_metadata.enq_qdepth")
    bit<19> enq_qdepth;
    @alias("queueing_metadata.deq_timedelta")
    bit<32> deq_timedelta;
    @alias("queueing_metadata.deq_qdepth")
    bit<19> deq_qdepth;
    @alias("intrinsic_metadata.ingress_global_timestamp")
    bit<48> ingress_global_timestamp;
    @alias("intrinsic_metadata.egress_global_timestamp")
    bit<48> egress_global_timestamp;
    @alias("intrinsic_metadata.mcast_grp")
    bit<16> mcast_grp;       /* non-zero: replicate to this multicast group */
    @alias("intrinsic_metadata.egress_rid")
    bit<16> egress_rid;      /* replica id of a multicast copy */
    bit<1>  checksum_error;  /* set by a failing verify_checksum */
    error   parser_error;    /* the error the parser ended with */
    @alias("intrinsic_metadata.priority")
    bit<3>  priority;        /* egress queue (with priority queues enabled) */
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

/* An array of packet and/or byte counters, indexed by the program. Out-of-range indices
 * count nothing. */
extern counter
#if V1MODEL_VERSION >= 20200408
<I>
#endif
{
    counter(bit<32> size, CounterType type);
#if V1MODEL_VERSION >= 20200408
    void count(in I index);
#else
    void count(in bit<32> index);
#endif
}

/* One counter per entry of the table that names it in its `counters` property; the
 * matching entry's counter is updated on every hit. */
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

#define V1MODEL_METER_COLOR_GREEN  0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED    2

/* An array of two-rate three-colour meters (RFC 2698). execute_meter writes the colour
 * (0 green, 1 yellow, 2 red) to result. */
extern meter
#if V1MODEL_VERSION >= 20200408
<I>
#endif
{
    meter(bit<32> size, MeterType type);
#if V1MODEL_VERSION >= 20200408
    void execute_meter<T>(in I index, out T result);
#else
    void execute_meter<T>(in bit<32> index, out T result);
#endif
}

/* One meter per entry of the table that names it in its `meters` property; read() gives
 * the colour computed for the matching entry. */
extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

/* An array of values of type T kept across packets. */
extern register<T
#if V1MODEL_VERSION >= 20200408
    , I
#endif
    >
{
    register(bit<32> size);
#if V1MODEL_VERSION >= 20200408
    @noSideEffects
    T read(in I index);
    @noSideEffects
    void read(out T result, in I index);
    void write(in I index, in T value);
#else
    @noSideEffects
    void read(out T result, in bit<32> index);
    void write(in bit<32> index, in T value);
#endif
}

/* Table implementation: the control plane fills a pool of action members. */
extern action_profile {
    action_profile(bit<32> size);
}

/* Writes a uniformly random value in [lo, hi] to result. */
extern void random<T>(out T result, in T lo, in T hi);

/* Sends data (a struct) to the control plane as a digest message. */
extern void digest<T>(in bit<32> receiver, in T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();

/* Drops the packet at the end of the current control: sets egress_spec to the drop port
 * and clears mcast_grp. */
@pure
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

/* result = base + (H(data) mod max), or base when max is 0. */
@pure
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

/* Table implementation: an action profile whose groups pick a member by hashing the
 * selector key fields. */
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,   /* clone from ingress to egress */
    E2E    /* clone from egress to egress */
}

@deprecated("Please use verify_checksum/update_checksum instead.")
extern Checksum16 {
    Checksum16();
    bit<16> get<D>(in D data);
}

/* Sets standard_metadata.checksum_error when condition holds and the checksum of data
 * (a list of bit/int/varbit fields) differs from checksum. */
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

/* When condition holds, writes the checksum of data to checksum. */
@pure
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* As verify_checksum, with the unparsed payload appended to data. */
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);

/* As update_checksum, with the payload (the bytes the parser did not extract) appended. */
@noSideEffects
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* Clone the packet to the clone session's port(s). */
extern void clone(in CloneType type, in bit<32> session);

@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<T>(in T data);

/* Run ingress again on the original packet, keeping the user metadata fields annotated
 * @field_list(index). */
extern void resubmit_preserving_field_list(bit<8> index);

@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<T>(in T data);

/* Send the deparsed packet back to the parser, keeping the @field_list(index) fields. */
extern void recirculate_preserving_field_list(bit<8> index);

@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);

/* Clone, keeping the @field_list(index) user metadata fields in the clone. */
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

/* Transmit at most length bytes of the packet. */
extern void truncate(in bit<32> length);

/* Abort with an error message when check is false (debug builds). */
extern void assert(in bool check);

/* Like assert; a verification tool may take check as a hypothesis. */
extern void assume(in bool check);

/* Write a message to the switch log; "{}" in msg is replaced by the fields of data. */
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

/* The programmable blocks of the architecture, in pipeline order. */
parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);

/* Only verify_checksum(_with_payload) calls belong here. */
control VerifyChecksum<H, M>(inout H hdr,
                             inout M meta);

@pipeline
control Ingress<H, M>(inout H hdr,
                      inout M meta,
                      inout standard_metadata_t standard_metadata);

@pipeline
control Egress<H, M>(inout H hdr,
                     inout M meta,
                     inout standard_metadata_t standard_metadata);

/* Only update_checksum(_with_payload) calls belong here. */
control ComputeChecksum<H, M>(inout H hdr,
                              inout M meta);

/* Only packet_out.emit calls belong here. */
@deparser
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep
                       );

#endif /* _V1_MODEL_P4_ */

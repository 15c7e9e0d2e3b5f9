/* Constants of fabric.p4: wire values from the standards, sizes of the state arrays and the
 * codes shared with the control plane (p4src/README.md lists them for the controller). */
#ifndef _FABRIC_DEFINES_P4_
#define _FABRIC_DEFINES_P4_

/* The CPU port is the one simple_switch_grpc gets with --cpu-port; 255 unless the build
 * says otherwise (-DFABRIC_CPU_PORT=N). */
#ifndef FABRIC_CPU_PORT
#define FABRIC_CPU_PORT 255
#endif
const bit<9> CPU_PORT = FABRIC_CPU_PORT;
const bit<32> CPU_HEADER_BYTES = 2;           /* packet_in / packet_out header */

/* Ethernet and MAC control (IEEE 802.1Qbb priority-based flow control). */
const bit<32> ETHERNET_BYTES = 14;
const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_MAC_CONTROL = 0x8808;
/* A PFC refresh tick from the control plane (IEEE 802 Local Experimental EtherType 1; only
 * honoured in a packet-out, p4src/README.md "PFC refresh"). */
const bit<16> ETHERTYPE_PFC_REFRESH = 0x88B5;
const bit<16> PFC_OPCODE = 0x0101;
const bit<48> PFC_DST_MAC = 0x0180C2000001;
const bit<32> PFC_FRAME_BYTES = 60;          /* minimum frame without FCS */

/* IPv4, UDP, RoCEv2. */
const bit<8>  IP_PROTO_UDP = 17;
const bit<16> UDP_PORT_ROCE = 4791;
const bit<16> UDP_PORT_INT = 4792;            /* UDP dport while INT is present */
const bit<16> UDP_PORT_INT_REPORT = 32766;    /* default telemetry report port */
const bit<2>  ECN_NOT_ECT = 0;
const bit<2>  ECN_CE = 3;
const bit<8>  BTH_OPCODE_LAST_DATA = 0x0B;   /* RC SEND (0x00-0x05) and WRITE (0x06-0x0B) */

/* INT (p4src/include/INT_LAYOUT.md). */
const bit<4>  INT_TYPE_MD = 1;
const bit<2>  INT_NPT_UDP_PORT = 1;
const bit<4>  INT_VERSION = 2;
const bit<5>  INT_HOP_WORDS = 8;
const bit<16> INT_INSTRUCTIONS = 0xFF00;
const bit<16> INT_DOMAIN_ID = 0x0AF1;
const bit<8>  INT_MD_WORDS = 3;               /* INT-MD header, in 4-byte words */
const bit<16> INT_SHIM_MD_BYTES = 16;         /* shim (4) + INT-MD header (12) */
const bit<16> INT_HOP_BYTES = 32;
#define INT_MAX_HOPS 8                        /* header stack size: hops a packet can carry */

/* INT telemetry report (p4src/README.md, "INT report format"). */
const bit<4>  REPORT_VERSION = 1;
const bit<4>  REPORT_KIND_INT = 1;
const bit<16> REPORT_HDR_BYTES = 16;

/* Sizes of the per port and per (port, priority) state. Ports are 0..511 (bit<9>). */
#define NUM_PORTS 512
#define NUM_PORT_PRIOS 4096                   /* port * 8 + priority */
#define FLOWLET_SLOTS 4096
#define LB_GROUPS 1024
#define LB_MAX_MEMBERS 8

/* Load-balancing modes, selected per destination group and class by MyIngress.lb_mode. */
const bit<3> LB_ECMP = 0;
const bit<3> LB_DLB = 1;
const bit<3> LB_SPRAY_RR = 2;
const bit<3> LB_SPRAY_RANDOM = 3;
const bit<3> LB_SPRAY_BEST_OF_TWO = 4;

/* Port load estimate (a discounting rate estimator): the recent byte count halves every
 * 2^dre_shift timestamp ticks; DRE_SHIFT is the default for microsecond timestamps (64 us),
 * the control plane sets 16 (65.5 us) for nanoseconds (the time_unit table). A shift amount:
 * p4c's BMv2 back end refuses shift amounts wider than 8 bits ([--Werror=overlimit]), hence
 * bit<8>. */
const bit<8> DRE_SHIFT = 6;

/* INT-MD ds_flags (INT_LAYOUT.md): the units of this fabric's hop records. */
const bit<16> INT_DS_TIME_NS = 0x0001;       /* timestamps and hop latency in nanoseconds */
const bit<16> INT_DS_QUEUE_BYTES = 0x0002;   /* queue_occupancy in bytes */

/* Clone sessions the control plane creates (p4src/README.md). */
const bit<32> INT_REPORT_SESSION = 1;
const bit<32> PFC_SESSION_BASE = 256;         /* session 256 + p sends out of port p */

/* What a clone is for; carried to egress in the preserved field list 1. */
const bit<8> CLONE_NONE = 0;
const bit<8> CLONE_PFC = 1;
const bit<8> CLONE_INT_REPORT = 2;
#define CLONE_FIELD_LIST 1

/* Why ingress dropped a packet: index of FabricIngress.counters.drop_reasons. */
const bit<8> DROP_MALFORMED = 1;      /* parser error (truncated, bad INT length), IPv4 options */
const bit<8> DROP_CHECKSUM = 2;       /* bad IPv4 header checksum */
const bit<8> DROP_MAC_CONTROL = 3;    /* 802.3x / 802.1Qbb frame reached the pipeline */
const bit<8> DROP_NOT_IPV4 = 4;       /* non-IPv4 frame not punted by the ACL */
const bit<8> DROP_TTL = 5;            /* TTL 0 or 1 */
const bit<8> DROP_ROUTE = 6;          /* routing_v4 miss or drop entry */
const bit<8> DROP_NO_MEMBER = 7;      /* ECMP group missing or empty */
const bit<8> DROP_ACL = 8;            /* acl drop entry */
const bit<8> DROP_NO_REPORT = 9;      /* egress: INT report clone without encap */

/* standard_metadata.instance_type values of simple_switch. */
const bit<32> INSTANCE_NORMAL = 0;
const bit<32> INSTANCE_INGRESS_CLONE = 1;
const bit<32> INSTANCE_EGRESS_CLONE = 2;

#endif

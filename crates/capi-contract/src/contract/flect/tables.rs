//! Word tables of gobuffalo/flect v1.0.3 (`plural_rules.go`, `acronyms.go`), as data.
//!
//! Order matters in every list here: flect derives rule priority from it.

/// One dictionary entry (flect's `word`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Word {
    pub singular: &'static str,
    pub plural: &'static str,
    /// Another accepted plural (only recognised as "already plural").
    pub alternative: Option<&'static str>,
    /// Plural → singular is not recorded (the plural is not a known plural).
    pub one_way: bool,
    /// Whole-word match only: the entry does not become a suffix rule.
    pub exact: bool,
}

impl Word {
    const fn new(singular: &'static str, plural: &'static str) -> Self {
        Self {
            singular,
            plural,
            alternative: None,
            one_way: false,
            exact: false,
        }
    }

    const fn alt(self, alternative: &'static str) -> Self {
        Self {
            alternative: Some(alternative),
            ..self
        }
    }

    const fn one_way(self) -> Self {
        Self {
            one_way: true,
            ..self
        }
    }

    const fn exact(self) -> Self {
        Self {
            exact: true,
            ..self
        }
    }
}

const fn w(singular: &'static str, plural: &'static str) -> Word {
    Word::new(singular, plural)
}

/// An uncountable word: its plural is itself.
const fn uncountable(word: &'static str) -> Word {
    Word::new(word, word)
}

/// flect's `dictionary`, in source order.
pub(super) static DICTIONARY: &[Word] = &[
    // identical singular and plural
    w("aircraft", "aircraft"),
    w("beef", "beef").alt("beefs"),
    w("bison", "bison"),
    w("blues", "blues").one_way(),
    w("chassis", "chassis"),
    w("deer", "deer"),
    w("fish", "fish").alt("fishes"),
    w("moose", "moose"),
    w("police", "police"),
    w("salmon", "salmon").alt("salmons"),
    w("series", "series"),
    w("sheep", "sheep"),
    w("shrimp", "shrimp").alt("shrimps"),
    w("species", "species"),
    w("swine", "swine").alt("swines"),
    w("trout", "trout").alt("trouts"),
    w("tuna", "tuna").alt("tunas"),
    w("you", "you"),
    // -en plurals
    w("child", "children"),
    w("ox", "oxen").exact(),
    // apophonic plurals
    w("foot", "feet"),
    w("goose", "geese"),
    w("man", "men"),
    w("human", "humans"),
    w("louse", "lice").exact(),
    w("mouse", "mice"),
    w("tooth", "teeth"),
    w("woman", "women"),
    // miscellaneous irregular plurals
    w("die", "dice").exact(),
    w("person", "people"),
    // French -u → -x
    w("adieu", "adieux").alt("adieus"),
    w("fabliau", "fabliaux"),
    w("bureau", "bureaus").alt("bureaux"),
    // Greek -on → -a
    w("criterion", "criteria"),
    w("ganglion", "ganglia").alt("ganglions"),
    w("lexicon", "lexica").alt("lexicons"),
    w("mitochondrion", "mitochondria").alt("mitochondrions"),
    w("noumenon", "noumena"),
    w("phenomenon", "phenomena"),
    w("taxon", "taxa"),
    // Latin -um → -a
    w("media", "media"),
    w("medium", "media").alt("mediums").one_way(),
    w("stadium", "stadiums").alt("stadia"),
    w("aquarium", "aquaria").alt("aquariums"),
    w("auditorium", "auditoria").alt("auditoriums"),
    w("symposium", "symposia").alt("symposiums"),
    w("curriculum", "curriculums").alt("curricula"),
    w("quota", "quotas"),
    // Latin -us → -i / -era
    w("alumnus", "alumni").alt("alumnuses"),
    w("bacillus", "bacilli"),
    w("cactus", "cacti").alt("cactuses"),
    w("coccus", "cocci"),
    w("focus", "foci").alt("focuses"),
    w("locus", "loci").alt("locuses"),
    w("nucleus", "nuclei").alt("nucleuses"),
    w("octopus", "octupuses").alt("octopi"),
    w("radius", "radii").alt("radiuses"),
    w("syllabus", "syllabi"),
    w("corpus", "corpora").alt("corpuses"),
    w("genus", "genera"),
    // Latin -a → -ae
    w("alumna", "alumnae"),
    w("vertebra", "vertebrae"),
    w("differentia", "differentiae"),
    w("minutia", "minutiae"),
    w("vita", "vitae"),
    w("larva", "larvae"),
    w("postcava", "postcavae"),
    w("praecava", "praecavae"),
    w("uva", "uvae"),
    // Latin -ex → -ices
    w("apex", "apices").alt("apexes"),
    w("codex", "codices").alt("codexes"),
    w("index", "indices").alt("indexes"),
    w("latex", "latices").alt("latexes"),
    w("vertex", "vertices").alt("vertexes"),
    w("vortex", "vortices").alt("vortexes"),
    // Latin -ix → -ices
    w("appendix", "appendices").alt("appendixes"),
    w("radix", "radices").alt("radixes"),
    w("helix", "helices").alt("helixes"),
    // Latin -is → -es
    w("axis", "axes").exact(),
    w("crisis", "crises"),
    w("ellipsis", "ellipses").one_way(),
    w("genesis", "geneses"),
    w("oasis", "oases"),
    w("thesis", "theses"),
    w("testis", "testes"),
    w("base", "bases"),
    w("basis", "bases").one_way(),
    w("alias", "aliases").exact(),
    w("vedalia", "vedalias"),
    // words ending in -ch, -o, -s, -sh, -x, -z that conflict with other rules
    w("use", "uses").exact(),
    w("abuse", "abuses"),
    w("cause", "causes"),
    w("clause", "clauses"),
    w("cruse", "cruses"),
    w("excuse", "excuses"),
    w("fuse", "fuses"),
    w("house", "houses"),
    w("misuse", "misuses"),
    w("muse", "muses"),
    w("pause", "pauses"),
    w("ache", "aches"),
    w("topaz", "topazes"),
    w("buffalo", "buffaloes").alt("buffalos"),
    w("potato", "potatoes"),
    w("tomato", "tomatoes"),
    // uncountables
    uncountable("equipment"),
    uncountable("information"),
    uncountable("jeans"),
    uncountable("money"),
    uncountable("news"),
    uncountable("rice"),
    // -f → -s rather than -ves
    w("dwarf", "dwarfs").alt("dwarves"),
    w("hoof", "hoofs").alt("hooves"),
    w("thief", "thieves"),
    // -ve words that are not -f(e) plurals
    w("chive", "chives"),
    w("hive", "hives"),
    w("move", "moves"),
    // -ie words that are not -y plurals
    w("movie", "movies"),
    w("cookie", "cookies"),
    // -um words that take -s
    w("pretorium", "pretoriums"),
    w("agenda", "agendas"),
    // Latin -a → -ae (popular -s form)
    w("formula", "formulas").alt("formulae"),
    // -o words that take -s
    w("shoe", "shoes"),
    w("toe", "toes").exact(),
    w("graffiti", "graffiti"),
    // abbreviations
    w("ID", "IDs").exact(),
];

/// flect's `singularToPluralSuffixList` (singular suffix, plural suffix), in priority order.
pub(super) static SUFFIXES: &[(&str, &str)] = &[
    // -f / -fe → -ves
    ("tive", "tives"),
    ("eaf", "eaves"),
    ("oaf", "oaves"),
    ("afe", "aves"),
    ("arf", "arves"),
    ("rfe", "rves"),
    ("rf", "rves"),
    ("lf", "lves"),
    ("fe", "ves"),
    // consonant + y → -ies
    ("ay", "ays"),
    ("ey", "eys"),
    ("oy", "oys"),
    ("quy", "quies"),
    ("uy", "uys"),
    ("y", "ies"),
    // French -eau → -eaux
    ("eau", "eaux"),
    // Latin -a → -ae (flect maps all of these to "bulae")
    ("bula", "bulae"),
    ("dula", "bulae"),
    ("lula", "bulae"),
    ("nula", "bulae"),
    ("vula", "bulae"),
    // Greek -on → -a
    ("hedron", "hedra"),
    // Latin -um → -a
    ("ium", "ia"),
    ("seum", "seums"),
    ("eum", "ea"),
    ("oum", "oa"),
    ("stracum", "straca"),
    ("dum", "da"),
    ("elum", "ela"),
    ("ilum", "ila"),
    ("olum", "ola"),
    ("ulum", "ula"),
    ("llum", "lla"),
    ("ylum", "yla"),
    ("imum", "ima"),
    ("ernum", "erna"),
    ("gnum", "gna"),
    ("brum", "bra"),
    ("crum", "cra"),
    ("terum", "tera"),
    ("serum", "sera"),
    ("trum", "tra"),
    ("antum", "anta"),
    ("atum", "ata"),
    ("entum", "enta"),
    ("etum", "eta"),
    ("itum", "ita"),
    ("otum", "ota"),
    ("utum", "uta"),
    ("ctum", "cta"),
    ("ovum", "ova"),
    // Latin -ix → -ices
    ("trix", "trices"),
    // Latin -is → -es
    ("iasis", "iases"),
    ("mesis", "meses"),
    ("kinesis", "kineses"),
    ("resis", "reses"),
    ("gnosis", "gnoses"),
    ("opsis", "opses"),
    ("ysis", "yses"),
    // -ch, -o, -s, -sh, -x, -z
    ("ouse", "ouses"),
    ("lause", "lauses"),
    ("us", "uses"),
    ("ch", "ches"),
    ("io", "ios"),
    ("sh", "shes"),
    ("ss", "sses"),
    ("ez", "ezzes"),
    ("iz", "izzes"),
    ("tz", "tzes"),
    ("zz", "zzes"),
    ("ano", "anos"),
    ("lo", "los"),
    ("to", "tos"),
    ("oo", "oos"),
    ("o", "oes"),
    ("x", "xes"),
    // abbreviations
    ("S", "Ses"),
];

/// flect's `baseAcronyms`. The mixed-case entries can never match an upper-cased lookup,
/// exactly as in flect.
pub(super) static ACRONYMS: &[&str] = &[
    "OK", "UTF8", "HTML", "JSON", "JWT", "ID", "UUID", "SQL", "ACK", "ACL", "ADSL", "AES", "ANSI",
    "API", "ARP", "ATM", "BGP", "BSS", "CCITT", "CHAP", "CIDR", "CIR", "CLI", "CPE", "CPU", "CRC",
    "CRT", "CSMA", "CMOS", "DCE", "DEC", "DES", "DHCP", "DNS", "DRAM", "DSL", "DSLAM", "DTE",
    "DMI", "EHA", "EIA", "EIGRP", "EOF", "ESS", "FCC", "FCS", "FDDI", "FTP", "GBIC", "gbps",
    "GEPOF", "HDLC", "HTTP", "HTTPS", "IANA", "ICMP", "IDF", "IDS", "IEEE", "IETF", "IMAP", "IP",
    "IPS", "ISDN", "ISP", "kbps", "LACP", "LAN", "LAPB", "LAPF", "LLC", "MAC", "Mbps", "MC", "MDF",
    "MIB", "MoCA", "MPLS", "MTU", "NAC", "NAT", "NBMA", "NIC", "NRZ", "NRZI", "NVRAM", "OIDC",
    "OSI", "OSPF", "OUI", "PAP", "PAT", "PC", "PIM", "PCM", "PDU", "POP3", "POTS", "PPP", "PPTP",
    "PTT", "PVST", "RAM", "RARP", "RFC", "RIP", "RLL", "ROM", "RSTP", "RTP", "RCP", "SDLC", "SFD",
    "SFP", "SLARP", "SLIP", "SMTP", "SNA", "SNAP", "SNMP", "SOF", "SRAM", "SSH", "SSID", "STP",
    "SYN", "TDM", "TFTP", "TIA", "TOFU", "UDP", "URL", "URI", "USB", "UTP", "VC", "VLAN", "VLSM",
    "VPN", "W3C", "WAN", "WEP", "WiFi", "WPA", "WWW",
];

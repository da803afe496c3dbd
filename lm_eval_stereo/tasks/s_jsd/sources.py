"""The upstream sources of S_JSD: the multilingual CrowS-Pairs gender translations and the original CrowS-Pairs."""

from lm_eval_stereo.core.pins import parse_pins
from lm_eval_stereo.core.upstream import Source

S_JSD_MULTILINGUAL = Source(
    name="s_jsd-multilingual",
    repo="VSteinborn/s_jsd-multilingual-bias",
    commit="b10302047b55043004a0280f8c2f63236ccea878",
    licence="CC BY-SA 4.0",
    citation="Steinborn, Dufter, Jabbar, Schütze (2022). An Information-Theoretic Approach and Dataset for Probing "
    "Gender Stereotypes in Multilingual Masked Language Models. Findings of NAACL 2022.",
    files=parse_pins(
        """
    172a8ad57c5b25647cd91affa7e3472d06dcdcbd783a129aa38dfd148a9c8665      85255  data/cps_translated_ar_formatted.csv
    68495e0185780c8a47fc4d999a1774f5718be8654c8926f67f97d4f4b5ba1630      70201  data/cps_translated_de_formatted.csv
    e965762fa00af7648e5146c504fdd4940b7cf9703f85394257aaaf70d8c28d0c      64549  data/cps_translated_en_formatted.csv
    a20b411b62b7f8255381429475c90b8205425dff8c6d0f4845b604cf106b6a1d      67601  data/cps_translated_fi_formatted.csv
    a50e0f3cca8b7acfeb0a618bb67032d9c592d00e7ea4bff7b54c36640f7d8201      71451  data/cps_translated_fr_formatted.csv
    669d2c8477786e5c278081bcc3192a432feb8ffab57fd623d0c1c77fc6e2c31b      68158  data/cps_translated_id_formatted.csv
    6c8e90c6bd113bdbd719860b87f0baffc0d4729b4a3032452073e1af1d078dc2      74674  data/cps_translated_ko_formatted.csv
    34a86c49aa89f6c699ea481b530ab894c27373b73d080d1f0069a0041823299b     110345  data/cps_translated_th_formatted.csv
    e724d536191dd6d1e4eed83748a4285af50a98c1d5c263be650bd56f0ee970c5      77141  data/cps_translated_vi_formatted.csv
    d92b05b1bebfd59b7d2d3db1d8d435e9915e5713d8e03b52e6ba5942ff5f6066      64173  data/cps_translated_zh_formatted.csv
"""
    ),
)

CROWS_PAIRS = Source(
    name="crows-pairs",
    repo="nyu-mll/crows-pairs",
    commit="8aaac11c485473159ec9328a65253a5be9a479dc",
    licence="CC BY-SA 4.0",
    citation="Nangia, Vania, Bhalerao, Bowman (2020). CrowS-Pairs: A Challenge Dataset for Measuring Social Biases in "
    "Masked Language Models. EMNLP 2020.",
    files=parse_pins(
        """
    dfb36986ce0502abbaf7055b9176da3d08d48e07df1251991b5dfbcbceab9d0c     437764  data/crows_pairs_anonymized.csv
"""
    ),
)

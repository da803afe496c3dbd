"""The upstream source of stereotype leakage: the human annotations, the reference scripts and the generation
notebook."""

from lm_eval_stereo.core.pins import parse_pins
from lm_eval_stereo.core.upstream import Source

STEREOTYPE_LEAKAGE = Source(
    name="stereotype-leakage",
    repo="AnnaSou/Stereotype_Leakage",
    commit="8254eb7899da6e81969baca9e0aa76434565e92d",
    licence="MIT",
    citation="Cao, Sotnikova, Zhao, Zou, Rudinger, Daumé III (2025). Multilingual Large Language Models Leak Human "
    "Stereotypes across Language Boundaries. NLP4PI workshop 2025, arXiv:2312.07141.",
    files=parse_pins(
        """
    c9aa217dfb423e25810a72ddad7e928ee3b01091ed9d1acce7b73706c57bc86f      32528  aggre_tem.py
    7bf81970c37bf625bc416b9715f3c60f2767d3618b169cfe9f94667a4ecaec0a      98852  asso.py
    9398f50a84744a7dede2711be26670aeb58188dcd89ec6d2901a0cb2dc2636cd      30314  dataset/ChatGPT_ABC_generations.ipynb
    dcbf225f2b84486e4d67678ccf74a25f884e54fa8621c1e7e7f469f8f2910dea      22162  dataset/Datasheet.md
    10d32c1abe7e9e98a4402ad94e7d6d63d1224fe67f737086a6fc578be1817b63       7155  dataset/aggregated_data_EN.csv
    c93854e3f8097eb51ff5ca9b3bc6af54550dc2c2dbffe9dc2688e5a5653a46f1       6480  dataset/aggregated_data_HI.csv
    5c40e744d685b250059bd197ef4c08757549008c12b06c9e34e7c1c68a6b1d79       6932  dataset/aggregated_data_RU.csv
    28a04a359c88c13883cae721c07dc3c6427dc05d72f17f8b16738463029ccc18       6679  dataset/aggregated_data_ZH.csv
    1fb8cdd6f6e1e37061708ce1644b268593783e37c39a3213ecf519aaa2006e60       1664  dataset/annotators_demographics_EN.csv
    cfbd8331de8c382ca5d738a743166045e22380604beb78c1b21ee290583b7452       4753  dataset/annotators_demographics_HI.csv
    1d90729bfb9a07b1356596733ab858c702d3d4b179aaea7cc327ad1a0ed05bc8       3499  dataset/annotators_demographics_RU.csv
    b8f8dabd80416f56e5d267b687a6ae2c4a36fe3b7e94965f1a662c6a466b7764       1692  dataset/annotators_demographics_ZH.csv
    115a1f692533d78832a60ce0b19b232982274566cf97bb83cc3a9438ef9bc984     102514  dataset/data_full_chinese.json
    d2bcc1cbae319284df1ebc28272de0e9478ad6f1a9d9eba252a4bccfcfcff685      85236  dataset/data_full_english.json
    f76c12631046302a2986e1f1d28375fc3f90232077032795d2c67a571a6f799c     100291  dataset/data_full_hindi.json
    6d66000054bf6033fb6207561f19c20453442198a9f3553641caa438d92c1c27      90534  dataset/data_full_russian.json
"""
    ),
)

"""The upstream files behind the offline runs of lm_eval's own EsBBQ, CaBBQ and BBQ tasks (lm_eval loads them from the
hub: BSC-LT/EsBBQ and BSC-LT/CaBBQ, whose rows :mod:`.mirror_rows` makes from the authors' CSV, and
oskarvanderwal/bbq, whose rows are BBQ's own JSON lines), and the EsBBQ/CaBBQ authors' scoring script the parity tests
run. CrowS-Pairs is the source S_JSD declares."""

from lm_eval_stereo.core.pins import parse_pins
from lm_eval_stereo.core.upstream import Source

ESBBQ_CABBQ = Source(
    name="esbbq-cabbq",
    repo="langtech-bsc/EsBBQ-CaBBQ",
    commit="ee2e0f6123f718b735fc445d368d92acd2c223be",
    licence="Apache-2.0",
    citation="Ruiz-Fernández et al. (2025). EsBBQ and CaBBQ: The Spanish and Catalan Bias Benchmarks for Question "
    "Answering. arXiv 2507.11216.",
    files=parse_pins(
        """
    05fd57cf59460c9a2a3d96b49f1377a1a5bd8cf13daac87e1ff13d851b473c1c    2962504  data_es/Age.full.csv
    d9fcc40a97d8f8fc081d6733dcff262c37f1b771076c84020429cbd28302e2a0    2085920  data_es/DisabilityStatus.full.csv
    340242eabe1133de12e4f5496c547cdd78e7a7bb4c6514b21b48cae0fdc362e0    2434220  data_es/Gender.full.csv
    4008b83ea7fcb3e4400667ea501501fed1e8eed4c5fe7064e65361476d793b39    1733302  data_es/LGBTQIA.full.csv
    1c95c5ad8b0cf7f93848aa156d9a3ddba8ec330a1078633df750ccabbc259ea3     370326  data_es/Nationality.full.csv
    920cdfd8814470ff3204eacbb36c5cd5376b12a3cbeafca4812318c1f26bbe5a    2335012  data_es/PhysicalAppearance.full.csv
    c9fd61928e9f5d86ac8081274e9f6e622725742c89a94a0ad25b14e14290e21d    2899934  data_es/RaceEthnicity.full.csv
    4f224a33a744217651e62b95d9c5a2ed2eb1c9ddb694d42b37af715221542b71     521524  data_es/Religion.full.csv
    64164f05bf6ab7ceea00a35d465c2cf8bf7364c7045131c2136d8aab49bd4270    2835696  data_es/SES.full.csv
    cc9d1ad1dbb0e4dbefcd10205f3cb764d0ea53f64b82c2c03dd3cbe0ba9d1002     555772  data_es/SpanishRegion.full.csv
    da477fc5c6897ee3424204c396cec66b92b85ff615b122c93fdd054dda9b0d09    2898812  data_ca/Age.full.csv
    44ce612d6cd03d0cd10bc27d4c5cbb0495a7a1fa84aaf1f3f04dad2a6f28b4f8    2075772  data_ca/DisabilityStatus.full.csv
    35aea9aeefd666965026ef1b7d02f53959cc9ec2b548d5227914526d9396035d    2474486  data_ca/Gender.full.csv
    89a531f80e0e1d875c4efec64390bcede78ca30a3c8f2aeaba9300b6c020b1f7    1742332  data_ca/LGBTQIA.full.csv
    3d586021e8d00ed005fc3ddcf66df6b8d2deec2b7d1e771bc9136b1287e64ae2     369788  data_ca/Nationality.full.csv
    f48c9e288feb01a7fc84a5a7022ceb88dec88da615bdf3c3ba011ecf5e77cb88    2376720  data_ca/PhysicalAppearance.full.csv
    5f6869eb397d56730921adf1eeec1abb25a4dcf3a541175295c46b5151c2bec9    2948110  data_ca/RaceEthnicity.full.csv
    ff2bdbcaecb2ad96558f961edd671b209447a2cd21802d069530eb9216e789b2     523906  data_ca/Religion.full.csv
    b2d4880f5d7aaeb96033b97051f30b8259b397b65326100d331dd15b45428b38    2851256  data_ca/SES.full.csv
    efe6aac654ddd8b1a154d5c5f69186c2c5b6ce411978863f0881fc3f3cd37be4     558844  data_ca/SpanishRegion.full.csv
    d15249c9786215a3de6fb4d1d5e3ba8a19c8461adaf382bb69409d1f777ee373      11283  bias_score.py
"""
    ),
)

#: BBQ's rows of six of its eleven categories, the JSON lines lm_eval's ``bbq`` reads from the hub (oskarvanderwal/bbq);
#: the offline mirror lacks the other five (Gender_identity, Race_ethnicity, Race_x_SES, Race_x_gender, SES)
BBQ = Source(
    name="bbq",
    repo="nyu-mll/BBQ",
    commit="bea11bd97d79217245b5871acd247b9d6eb24598",
    licence="CC BY 4.0",
    citation="Parrish et al. (2022). BBQ: A Hand-Built Bias Benchmark for Question Answering. Findings of ACL 2022.",
    files=parse_pins(
        """
    46e805b3fc2d8cbd26eeb8e8430d98cf7b2dc9c83574ff3674e8ce4f0fca2a60    3091834  data/Age.jsonl
    375d40d9b71f056150264445ec189b13934998f3f49a1e311aa7578eb3b45e5f    1336984  data/Disability_status.jsonl
    a583e74666aec0341ded8aa3983e7cad694eb24de72c254d28b2df3035720090    2900040  data/Nationality.jsonl
    e48d7e13508565f4801574e611043470c25c95a0a62af3699cb5ee7cb02608fb    1347476  data/Physical_appearance.jsonl
    cb9555f9f3454a52cd2df85956b59bd7fcca5aa922c8527693b1164d08417616    1118728  data/Religion.jsonl
    2c71036b9e7584fe589c42aef32c1a42bc01b9a5e9b1b8704342630cdb08cefd     729010  data/Sexual_orientation.jsonl
"""
    ),
)

"""Write the small sylloge fixtures in sylloge's own cache layout (run once; the output is committed).

    python tests/data/sylloge/make_fixture.py

The layout is what sylloge writes to ``~/.data/sylloge/<family>/cached/<name>/`` after its first download
(``ParquetEADataset.to_parquet``), so :mod:`kgeval.ea.sylloge_loader` reads these folders exactly as it reads a
real cache: ``open_ea/cached/D_W_15K_V2`` (a toy DBpedia-Wikidata pair with Wikidata name attributes P373/P1476)
and ``med_bbk/cached/industry`` (a toy pair without URI prefixes; one entity has the same label in both graphs).
"""

from pathlib import Path

import pandas as pd
from eche import ClusterHelper, PrefixedClusterHelper
from sylloge.base import ParquetEADataset

HERE = Path(__file__).resolve().parent
DBR = "http://dbpedia.org/resource/"
DBO = "http://dbpedia.org/ontology/"
WD = "http://www.wikidata.org/entity/"


def table(rows):
    return pd.DataFrame(rows, columns=["head", "relation", "tail"]).astype(str)


def d_w() -> None:
    places = {  # DBpedia name -> (Wikidata id, P373 value or None)
        "Berlin": ("Q64", "Berlin"),
        "Paris": ("Q90", "Paris"),
        "Rome": ("Q220", "Roma"),
        "Madrid": ("Q2807", "Madrid"),
        "Germany": ("Q183", "Germany"),
        "France": ("Q142", "France"),
        "Italy": ("Q38", "Italia"),
        "Spain": ("Q29", None),
        "Europe": ("Q46", None),
        "Angela_Merkel": ("Q567", "Angela Merkel"),
    }
    rel1 = [
        (DBR + "Berlin", DBO + "country", DBR + "Germany"),
        (DBR + "Paris", DBO + "country", DBR + "France"),
        (DBR + "Rome", DBO + "country", DBR + "Italy"),
        (DBR + "Madrid", DBO + "country", DBR + "Spain"),
        (DBR + "Germany", DBO + "capital", DBR + "Berlin"),
        (DBR + "France", DBO + "capital", DBR + "Paris"),
        (DBR + "Italy", DBO + "capital", DBR + "Rome"),
        (DBR + "Germany", DBO + "continent", DBR + "Europe"),
        (DBR + "France", DBO + "continent", DBR + "Europe"),
        (DBR + "Germany", DBO + "leader", DBR + "Angela_Merkel"),
        (DBR + "Lisbon", DBO + "continent", DBR + "Europe"),
    ]
    q = {k: WD + v[0] for k, v in places.items()}
    rel2 = [
        (q["Berlin"], WD + "P17", q["Germany"]),
        (q["Paris"], WD + "P17", q["France"]),
        (q["Rome"], WD + "P17", q["Italy"]),
        (q["Madrid"], WD + "P17", q["Spain"]),
        (q["Germany"], WD + "P36", q["Berlin"]),
        (q["France"], WD + "P36", q["Paris"]),
        (q["Spain"], WD + "P36", q["Madrid"]),
        (q["Germany"], WD + "P30", q["Europe"]),
        (q["Italy"], WD + "P30", q["Europe"]),
        (q["Germany"], WD + "P6", q["Angela_Merkel"]),
    ]
    attr1 = [(DBR + k, DBO + "populationTotal", str(1000 + i)) for i, k in enumerate(places)]
    attr1 += [(DBR + k, DBO + "areaTotal", str(10 * i)) for i, k in enumerate(["Berlin", "Paris", "Germany"])]
    attr1 += [(DBR + "Berlin", DBO + "populationTotal", "3600000")]  # a second value of the same attribute
    attr2 = [(q[k], WD + "P373", f'"{v[1]}"@en') for k, v in places.items() if v[1] is not None]
    attr2 += [(q["Angela_Merkel"], WD + "P1476", '"Angela Dorothea Merkel"@de')]
    attr2 += [(q[k], WD + "P1082", str(2000 + i)) for i, k in enumerate(["Berlin", "Rome", "Spain", "Europe"])]
    links = [{DBR + k, q[k]} for k in places]
    names = ("DBpedia", "Wikidata")
    prefixes = (DBR, WD)
    ent_links = PrefixedClusterHelper(links, ds_prefixes=dict(zip(names, prefixes)))
    ds = ParquetEADataset(
        rel_triples=[table(rel1), table(rel2)],
        attr_triples=[table(attr1), table(attr2)],
        ent_links=ent_links,
        dataset_names=names,
        ds_prefix_tuples=prefixes,
    )
    ds.to_parquet(HERE / "open_ea" / "cached" / "D_W_15K_V2")


def med_bbk() -> None:
    rel1 = [("糖尿病", "症状", "多饮"), ("高血压", "症状", "头痛"), ("糖尿病", "并发症", "高血压")]
    rel2 = [("糖尿病", "临床表现", "口渴多饮"), ("高血压病", "临床表现", "头痛"), ("糖尿病", "相关疾病", "高血压病")]
    attr1 = [("糖尿病", "别名", "消渴"), ("高血压", "科室", "心内科")]
    attr2 = [("糖尿病", "英文名", "diabetes"), ("糖尿病", "科室", "内分泌科"), ("头痛", "科室", "神经科")]
    links = [{"糖尿病"}, {"高血压", "高血压病"}, {"多饮", "口渴多饮"}, {"头痛 ", "头痛"}]
    # "头痛 " (trailing space) is graph 1's label only in this link: it tests that a link entity joins its graph
    rel1.append(("头痛 ", "部位", "头部"))
    ds = ParquetEADataset(
        rel_triples=[table(rel1), table(rel2)],
        attr_triples=[table(attr1), table(attr2)],
        ent_links=ClusterHelper(links),
        dataset_names=("BBK", "MED"),
    )
    ds.to_parquet(HERE / "med_bbk" / "cached" / "industry")


if __name__ == "__main__":
    d_w()
    med_bbk()

export interface SkillsTables {
  skills: {
    organization_id: string;
    name: string;
    description: string;
    instructions: string;
    created_at: number;
    updated_at: number;
  };
}
